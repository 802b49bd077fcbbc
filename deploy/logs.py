"""Structured logs: one JSON object per line on stderr (``LOG_FORMAT=json``, the default).

Each line has ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the process id,
and, when present, ``exc`` (the formatted traceback) and the request's ``method``, ``path``
and ``status`` (Django's request loggers attach the request). ``LOG_FORMAT=text`` gives the
plain one-line format instead.
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


def logging_config(fmt: str, level: str) -> dict:
    formatter = (
        {"()": "deploy.logs.JsonFormatter"}
        if fmt == "json"
        else {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": formatter},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "main"}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {"django.db.backends": {"level": "INFO"}},
    }
