"""Structured logs: one JSON object per line on stderr (``LOG_FORMAT=json``, the default).

Each line has ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the process id,
and, when present, ``exc`` (the formatted traceback) and the request's ``method``, ``path``
and ``status`` (Django's request loggers attach the request). ``LOG_FORMAT=text`` gives the
plain one-line format instead. ``LOG_FILE`` adds a file that gets every record, and then
``LOG_CONSOLE_LEVEL`` / ``LOG_CONSOLE_INFO`` choose what the console still shows
(``bin/run-demo``: warnings and errors, and the job progress of ``annotator.actions``).
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": os.getpid(),
        }
        request = getattr(record, "request", None)
        if request is not None and hasattr(request, "path"):
            entry["method"] = getattr(request, "method", None)
            entry["path"] = request.path
        status = getattr(record, "status_code", None)
        if status is not None:
            entry["status"] = status
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class ConsoleFilter(logging.Filter):
    """Lets a record through to the console when it is at ``level`` or above, or comes from one
    of the ``info`` logger prefixes at INFO or above (``LOG_CONSOLE_LEVEL`` and
    ``LOG_CONSOLE_INFO``): the demo's console keeps warnings, errors and job progress while
    every request line goes to the file of ``LOG_FILE`` only."""

    def __init__(self, level: str = "DEBUG", info: str = "", periodic: str = ""):
        super().__init__()
        self.level = logging.getLevelName(level.upper()) if isinstance(level, str) else level
        self.prefixes = tuple(p.strip() for p in info.split(",") if p.strip())
        # the periodic tasks' own lines (a sweep every minute) are not progress worth a console line
        self.periodic = tuple(f"{name.strip()}[" for name in periodic.split(",") if name.strip())

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.level:
            return True
        if record.levelno < logging.INFO or not any(
            record.name == p or record.name.startswith(p + ".") for p in self.prefixes
        ):
            return False
        message = record.getMessage()
        return not any(task in message for task in self.periodic)


def logging_config(
    fmt: str,
    level: str,
    *,
    log_file: str = "",
    console_level: str = "",
    console_info: str = "",
    periodic_tasks: tuple[str, ...] = (),
) -> dict:
    """Every record at ``level`` or above on stderr; with ``log_file``, every record in that file
    too, and the console only what ``ConsoleFilter(console_level, console_info)`` lets through."""
    formatter = (
        {"()": "deploy.logs.JsonFormatter"}
        if fmt == "json"
        else {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    )
    console: dict = {"class": "logging.StreamHandler", "formatter": "main"}
    handlers: dict = {"console": console}
    filters: dict = {}
    if console_level or console_info:
        filters["console"] = {
            "()": "deploy.logs.ConsoleFilter",
            "level": console_level or "DEBUG",
            "info": console_info,
            "periodic": ",".join(periodic_tasks),
        }
        console["filters"] = ["console"]
    if log_file:
        os.makedirs(os.path.dirname(os.path.abspath(log_file)), exist_ok=True)
        handlers["file"] = {"class": "logging.FileHandler", "formatter": "main", "filename": log_file}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": formatter},
        "filters": filters,
        "handlers": handlers,
        "root": {"handlers": list(handlers), "level": level},
        "loggers": {"django.db.backends": {"level": "INFO"}},
    }
