"""Workflow errors. Each carries the HTTP status and a stable code the API reports."""

from __future__ import annotations


class WorkflowError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(WorkflowError):
    status = 400
    code = "invalid"


class Conflict(WorkflowError):
    """The object's state forbids the operation (frozen, not yet frozen, already published)."""

    status = 409
    code = "conflict"


class NotPermitted(WorkflowError):
    """The person sees the object but may not do this now (separation of duties)."""

    status = 403
    code = "forbidden"


class StaleVersion(WorkflowError):
    """The caller's version of the ledger is not the current one; nothing was changed."""

    status = 412
    code = "stale_version"
