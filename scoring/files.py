"""The file layer of ``python -m scoring score``: reading a submission from a path.

Every scorer kind reads the way its verifier does, except that nothing here waits for
ever or reads an endless file: the file is opened with ``O_NONBLOCK``, checked with
``fstat`` and read up to the scorer's byte cap plus one byte (a device or FIFO with
``poll``, for at most ``STREAM_WAIT_SECONDS``). The result is the bytes
or the exception that becomes the reason (see docs/scoring.md, "Reading a submission").

* ``actions`` (the egocentric judge): ``O_NOFOLLOW`` (a symlink fails with ``ELOOP``),
  a regular file only (``solution must be a regular file``), at most 2,000,000 bytes
  (``solution exceeds 2000000 bytes``).
* ``break_points`` (the tennis judge reads ``Path.read_text()``, following links, with
  no cap): a directory gives the judge's ``IsADirectoryError`` text; a device or FIFO is
  read as the judge reads it, to its end (``/dev/null`` is an empty file, a FIFO whose
  writer writes and closes gives those bytes), as long as it ends within
  ``STREAM_MAX_BYTES`` and ``STREAM_WAIT_SECONDS``; a stream that does not (``/dev/zero``,
  ``/dev/urandom``, a FIFO nobody writes to) is taken as one on which the judge would
  exhaust its memory or wait for ever, and is refused with the text the judge writes for
  an endless file, the empty ``MemoryError`` message. A stream that ends past either bound
  (a FIFO whose writer closes after 2 s, or that yields more than 16 MiB) is refused the
  same way, although the judge would read it to its end. A regular file is read whole by the drop-in
  command line (``cap=None``, as the judge); the server's file layer keeps the 16 MiB cap
  (``solution exceeds 16777216 bytes``).
* ``moments`` (no published verifier): follows links, a regular file only
  (``submission must be a regular file``), at most 10,000,000 bytes.

Every path given as a string is first spelled as the judges' ``argparse`` option
``type=Path`` spells it (:func:`judge_path`): ``sol.json/`` is ``sol.json``, ``''`` is
``.``, ``.//missing.json`` is ``missing.json``.
"""

import errno
import os
import stat

from .constants import EGOCENTRIC_MAX_BYTES, MOMENTS_MAX_BYTES, TENNIS_MAX_BYTES
from .errors import SolutionRejected

_CHUNK = 1024 * 1024

# A device or FIFO read for the tennis judge: what it yields past this many bytes, or
# after this many seconds without reaching its end, is taken as endless.
STREAM_MAX_BYTES = TENNIS_MAX_BYTES
STREAM_WAIT_SECONDS = 2.0

# The byte cap of each kind's file layer, and the word its over-cap reason starts with.
SOLUTION_CAPS = {"actions": EGOCENTRIC_MAX_BYTES, "break_points": TENNIS_MAX_BYTES, "moments": MOMENTS_MAX_BYTES}
_CAP_NOUNS = {"actions": "solution", "break_points": "solution", "moments": "submission"}


def over_cap_reason(kind: str) -> str:
    """The file layer's reason for a file over the cap of ``kind`` (for ``actions`` and
    ``moments`` the same text the scorer gives for bytes over that cap; the tennis scorer
    takes bytes of any size, its cap being the server's)."""
    return f"{_CAP_NOUNS[kind]} exceeds {SOLUTION_CAPS[kind]} bytes"


def judge_path(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """``str(pathlib.PurePosixPath(path))`` for a string, without importing ``pathlib``
    (the judges parse ``--solution`` with ``type=Path``): empty and ``.`` components
    dropped, repeated and trailing slashes collapsed, exactly two leading slashes kept,
    nothing left is ``.``. A path object is returned as it is."""
    if not isinstance(path, str):
        return path
    root = ""
    if path.startswith("/"):
        root = "//" if path.startswith("//") and not path.startswith("///") else "/"
    parts = [part for part in path.split("/") if part and part != "."]
    return root + "/".join(parts) if root or parts else "."


def _read_bounded(descriptor: int, cap: int | None) -> bytes:
    """At most ``cap + 1`` bytes from ``descriptor`` (one more than the cap tells
    "over the cap" without reading the rest); all of it when ``cap`` is None."""
    chunks = []
    remaining = cap + 1 if cap is not None else -1
    while remaining:
        chunk = os.read(descriptor, _CHUNK if remaining < 0 else min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        if remaining > 0:
            remaining -= len(chunk)
    return b"".join(chunks)


def _open(path: str | os.PathLike[str], *, follow_links: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags)


def read_egocentric_solution(path: str | os.PathLike[str]) -> bytes | BaseException:
    """The published egocentric file layer: no symlinks, a regular file, size cap."""
    path = judge_path(path)
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


def _read_stream(descriptor: int, limit: int, wait: float) -> bytes | None:
    """A device or FIFO to its end, or None when it yields more than ``limit`` bytes or
    does not end within ``wait`` seconds. ``poll`` reports a FIFO readable only once a
    writer has written or closed (Linux sets POLLHUP only after a writer came), so a
    FIFO nobody opens for writing waits out ``wait`` instead of reading as empty."""
    import select
    import time

    poller = select.poll()
    poller.register(descriptor, select.POLLIN)
    deadline = time.monotonic() + wait
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not poller.poll(max(1, int(remaining * 1000))):
            return None
        try:
            chunk = os.read(descriptor, _CHUNK)
        except BlockingIOError:
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None


def read_tennis_solution(path: str | os.PathLike[str], *, cap: int | None = TENNIS_MAX_BYTES) -> bytes | BaseException:
    """The tennis file layer: the judge's ``read_text`` outcome, never blocking for long
    and never reading without bound. ``cap`` bounds a regular file (None: read it whole,
    as the judge does; the drop-in command line)."""
    path = judge_path(path)
    try:
        descriptor = _open(path, follow_links=True)
    except OSError as error:
        return error
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            data = _read_stream(descriptor, STREAM_MAX_BYTES, STREAM_WAIT_SECONDS)
            # None: the judge would read on until memory runs out (or wait for a
            # writer for ever); the reason it writes then is the empty MemoryError text.
            return SolutionRejected("") if data is None else data
        data = _read_bounded(descriptor, cap)
    except OSError as error:
        return error
    finally:
        os.close(descriptor)
    if cap is not None and len(data) > cap:
        return SolutionRejected(over_cap_reason("break_points"))
    return data


def read_moment_submission(path: str | os.PathLike[str]) -> bytes | BaseException:
    """The moment-search file layer: a regular file (links followed), size cap."""
    path = judge_path(path)
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


def read_solution(kind: str, path: str | os.PathLike[str], *, drop_in: bool = False) -> bytes | BaseException:
    """Bytes of the submission at ``path`` for a scorer of ``kind``, or the exception
    that the scorer turns into its reason. ``drop_in`` (``python -m scoring score``):
    read exactly as the published judge does, so a tennis file over the server's 16 MiB
    cap is read whole."""
    if drop_in and kind == "break_points":
        return read_tennis_solution(path, cap=None)
    return READERS[kind](path)
