"""Database errors inside a Celery task are waited out, with backoff, before they fail it.

A task that loses its database connection (PostgreSQL restarted, a network cut, the pool
empty for its timeout) raises ``OperationalError`` or ``InterfaceError``. Such a task is
acknowledged all the same (``acks_late`` redelivers only on a lost worker), so without a
retry its work would wait for a sweep. :func:`with_database_retries` calls the task's body
again after 1, 2, 4, 8, 15 and 30 s (about a minute in all), closing the broken
connections first so that each try opens fresh ones; the last error is raised. The
bodies are idempotent (each says why), so running one again from the start is safe.
A try inside a transaction of the caller is not repeated (there is nothing to resume).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)

T = TypeVar("T")
DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


def _in_transaction() -> bool:
    return any(conn.in_atomic_block for conn in connections.all(initialized_only=True))


def with_database_retries(body: Callable[[], T], *, what: str, delays: tuple[float, ...] = DELAYS) -> T:
    """``body()``, tried again after each delay while it raises a database error."""
    for attempt, delay in enumerate((*delays, None), start=1):
        try:
            return body()
        except (OperationalError, InterfaceError) as error:
            if delay is None or _in_transaction():
                raise
            logger.warning("%s: database error (try %s), again in %g s: %s", what, attempt, delay, error)
            for conn in connections.all(initialized_only=True):
                conn.close()
            time.sleep(delay)
    raise AssertionError("unreachable")
