"""The file layer of ``python -m scoring score``: reading a submission from a path.

Every scorer kind reads the way its verifier does, except that nothing here ever
blocks or reads without bound: the file is opened with ``O_NONBLOCK``, checked with
``fstat`` and read up to the scorer's byte cap plus one byte. The result is the bytes
or the exception that becomes the reason (see docs/scoring.md, "Reading a submission").

* ``actions`` (the egocentric judge): ``O_NOFOLLOW`` (a symlink fails with ``ELOOP``),
  a regular file only (``solution must be a regular file``), at most 2,000,000 bytes
  (``solution exceeds 2000000 bytes``).
* ``break_points`` (the tennis judge reads ``Path.read_text()``, following links, with
  no cap): a directory gives the judge's ``IsADirectoryError`` text; any other
  non-regular file (``/dev/zero``, a FIFO, a socket) is refused at once with the text
  the judge writes for an endless file, the empty ``MemoryError`` message; a regular
  file over 16 MiB is refused with ``solution exceeds 16777216 bytes``.
* ``moments`` (no published verifier): follows links, a regular file only
  (``submission must be a regular file``), at most 10,000,000 bytes.
"""

import errno
import os
import stat

from .constants import EGOCENTRIC_MAX_BYTES, MOMENTS_MAX_BYTES, TENNIS_MAX_BYTES
from .errors import SolutionRejected

_CHUNK = 1024 * 1024

# The byte cap of each kind's file layer, and the word its over-cap reason starts with.
SOLUTION_CAPS = {"actions": EGOCENTRIC_MAX_BYTES, "break_points": TENNIS_MAX_BYTES, "moments": MOMENTS_MAX_BYTES}
_CAP_NOUNS = {"actions": "solution", "break_points": "solution", "moments": "submission"}


def over_cap_reason(kind: str) -> str:
    """The file layer's reason for a file over the cap of ``kind`` (the same text the
    scorer gives for bytes handed to it over that cap)."""
    return f"{_CAP_NOUNS[kind]} exceeds {SOLUTION_CAPS[kind]} bytes"


def _read_bounded(descriptor: int, cap: int) -> bytes:
    """At most ``cap + 1`` bytes from ``descriptor`` (one more than the cap tells
    "over the cap" without reading the rest)."""
    chunks = []
    remaining = cap + 1
    while remaining > 0:
        chunk = os.read(descriptor, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _open(path: str | os.PathLike, *, follow_links: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags)


def read_egocentric_solution(path: str | os.PathLike) -> bytes | BaseException:
    """The published egocentric file layer: no symlinks, a regular file, size cap."""
    try:
        descriptor = _open(path, follow_links=False)
    except OSError as error:
        return error
    try:
        metadata = os.fstat(descriptor)
        if not stat.S_ISREG(metadata.st_mode):
            return SolutionRejected("solution must be a regular file")
        if metadata.st_size > EGOCENTRIC_MAX_BYTES:
            return SolutionRejected(over_cap_reason("actions"))
        data = _read_bounded(descriptor, EGOCENTRIC_MAX_BYTES)
    except OSError as error:
        return error
    finally:
        os.close(descriptor)
    if len(data) > EGOCENTRIC_MAX_BYTES:  # grew after fstat
        return SolutionRejected(over_cap_reason("actions"))
    return data


def read_tennis_solution(path: str | os.PathLike) -> bytes | BaseException:
    """The tennis file layer: the judge's ``read_text`` outcome, never blocking."""
    try:
        descriptor = _open(path, follow_links=True)
    except OSError as error:
        return error
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            # The judge reads such a file until memory runs out (or, for a FIFO,
            # waits for a writer); its reason is then the empty MemoryError text.
            return SolutionRejected("")
        data = _read_bounded(descriptor, TENNIS_MAX_BYTES)
    except OSError as error:
        return error
    finally:
        os.close(descriptor)
    if len(data) > TENNIS_MAX_BYTES:
        return SolutionRejected(over_cap_reason("break_points"))
    return data


def read_moment_submission(path: str | os.PathLike) -> bytes | BaseException:
    """The moment-search file layer: a regular file (links followed), size cap."""
    try:
        descriptor = _open(path, follow_links=True)
    except OSError as error:
        return error
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return SolutionRejected("submission must be a regular file")
        data = _read_bounded(descriptor, MOMENTS_MAX_BYTES)
    except OSError as error:
        return error
    finally:
        os.close(descriptor)
    if len(data) > MOMENTS_MAX_BYTES:
        return SolutionRejected(over_cap_reason("moments"))
    return data


READERS = {
    "actions": read_egocentric_solution,
    "break_points": read_tennis_solution,
    "moments": read_moment_submission,
}


def read_solution(kind: str, path: str | os.PathLike) -> bytes | BaseException:
    """Bytes of the submission at ``path`` for a scorer of ``kind``, or the exception
    that the scorer turns into its reason."""
    return READERS[kind](path)
