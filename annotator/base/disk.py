"""A full disk is a named, recoverable condition, not a 500 and not a truncated file.

* :func:`require_space` refuses work that needs more bytes than a folder's file system has
  free, less a reserve kept for the database's and the workers' own writes
  (``FRAMELEDGER_DISK_RESERVE_BYTES``): :class:`OutOfSpace`, answered ``507 Insufficient
  Storage`` with ``{"error": {"code": "insufficient_storage", "message": …}}`` naming the
  folder, what is free and what was needed.
* :func:`is_out_of_space` tells ENOSPC (and EDQUOT) apart from other write errors, so that
  one met half-way through a write is reported as such (:func:`out_of_space`), and job
  reasons say "the disk is full" instead of what a tool made of the short write.
* :class:`AtomicFileSystemStorage` (the default media storage) writes every file under a
  temporary name and renames it into place only once whole: a failed write leaves nothing.

The ASGI layer checks an upload's declared length before its body is read
(``deploy/body_limits.py``), so a full disk refuses the bytes instead of filling up with them.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from django.conf import settings
from django.core.files.storage import FileSystemStorage

from annotator.base.errors import WorkflowError

OUT_OF_SPACE_ERRNOS = {errno.ENOSPC, errno.EDQUOT}


class OutOfSpace(WorkflowError):
    """The server has no room for what was asked; nothing was stored."""

    status = 507
    code = "insufficient_storage"


def reserve_bytes() -> int:
    return int(getattr(settings, "FRAMELEDGER_DISK_RESERVE_BYTES", 0))


def free_bytes(folder: str | Path) -> int:
    """Free bytes for an unprivileged writer on ``folder``'s file system (its nearest
    existing parent's)."""
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    usage = os.statvfs(path)
    return usage.f_bavail * usage.f_frsize


def _mib(n: int) -> str:
    return f"{n / 1024**2:.1f} MiB"


def space_message(folder: str | Path, free: int, needed: int) -> str:
    return (
        f"the server is out of disk space: {folder} has {_mib(max(0, free))} free, "
        f"{_mib(needed)} are needed (with {_mib(reserve_bytes())} kept in reserve); nothing was stored. "
        "Ask an operator to free space, then try again."
    )


def require_space(folder: str | Path, needed: int) -> None:
    """Raise :class:`OutOfSpace` unless ``folder`` has ``needed`` bytes free beyond the reserve."""
    free = free_bytes(folder)
    if free - reserve_bytes() < needed:
        raise OutOfSpace(space_message(folder, free - reserve_bytes(), needed))


def is_out_of_space(error: BaseException | None) -> bool:
    """Is ``error`` (or what caused it) a write refused for lack of space?"""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, OSError) and error.errno in OUT_OF_SPACE_ERRNOS:
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


def out_of_space(folder: str | Path) -> OutOfSpace:
    """The error for a write that met ENOSPC half-way (and was undone)."""
    return OutOfSpace(
        f"the server is out of disk space: writing under {folder} failed with ENOSPC (no space left on device); "
        "nothing was stored. Ask an operator to free space, then try again."
    )


def full_disk_reason(what: str, error: BaseException | None) -> str | None:
    """A job's reason when ``error`` came of a full disk, else None: ENOSPC anywhere in its
    chain (PyAV's errors carry the errno), or the media folder left with less than the
    reserve free (a tool that met ENOSPC may report only that its output ended early)."""
    folder = settings.MEDIA_ROOT
    free = free_bytes(folder)
    if not is_out_of_space(error) and free > reserve_bytes():
        return None
    return (
        f"{what} failed: the disk is full (ENOSPC, no space left on device) under {folder}, "
        f"{_mib(free)} free now ({error}). Free space, then upload the video again."
    )


class AtomicFileSystemStorage(FileSystemStorage):
    """Django's file system storage, writing each file under a temporary name in the same
    folder and renaming it into place once whole; a failed write (ENOSPC half-way) removes
    the temporary file and raises, so no truncated file is left for no row to name."""

    def _save(self, name: str, content) -> str:
        part = f"{name}.part-{secrets.token_hex(6)}"
        try:
            written = super()._save(part, content)
        except BaseException:
            Path(self.path(part)).unlink(missing_ok=True)
            raise
        source = self.path(written)
        try:
            while os.path.exists(self.path(name)):  # placed meanwhile by another save
                name = self.get_available_name(name)
            os.replace(source, self.path(name))
        except BaseException:
            Path(source).unlink(missing_ok=True)
            raise
        return name
