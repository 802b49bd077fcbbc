"""Turning uploads (one file, several files, a zip) into labelled submission files.

Size limits are the scorer's own caps (``Scorer.max_solution_bytes`` and
``Scorer.over_cap_reason``, the values ``python -m scoring score`` reads with): a file
over the cap is still recorded (name, size, SHA-256 of everything uploaded) but its
bytes are not kept, and it is scored with the reason the scorer's file layer gives for
it. The site-wide ``FRAMELEDGER_MAX_SUBMISSION_BYTES`` ceiling applies only where it is
lower than a scorer's cap, with a reason naming it as FrameLedger's limit.
"""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from scoring import get_scorer

DEFAULT_MAX_SUBMISSION_BYTES = 16 * 1024 * 1024
MAX_BATCH_FILES = 5000
MAX_BATCH_KEPT_BYTES = 512 * 1024 * 1024
MAX_LABEL_CHARS = 200
CHUNK = 1024 * 1024

# Suffixes that name the file's role, not the run (longest first).
_ROLE_SUFFIXES = (".submitted-solution.json", ".solution.jsonl", ".solution.json", ".submission.json")
_ROLE_NAMES = {"solution.json", "solution.jsonl", "submission.json", "submission.jsonl", "submitted-solution.json"}


MiB = 1024 * 1024


@dataclass(frozen=True)
class ZipLimits:
    """Caps on what an uploaded archive may inflate to (zip bombs). Sizes and the entry
    count the archive declares are checked before anything is inflated; the inflated
    bytes are counted again while streaming, since declared sizes can lie."""

    entries: int = 10_000  # entries of the archive, folders and hidden files included
    entry_bytes: int = 64 * MiB  # inflated bytes of one entry
    total_bytes: int = 512 * MiB  # inflated bytes of every entry read, together
    ratio: int = 200  # inflated / compressed bytes of one entry ...
    ratio_grace: int = 1 * MiB  # ... once it has inflated past this many bytes
    directory_bytes: int = 16 * MiB  # the central directory, parsed before anything else


class UploadRefused(ValueError):
    """The upload as a whole cannot be taken (not a zip, too many files, too large)."""


@dataclass(frozen=True)
class ByteCap:
    limit: int
    reason: str  # the scorer's file-layer message for a file over the limit


@dataclass(frozen=True)
class SubmissionFile:
    label: str
    name: str
    content: bytes | None  # None: over the cap, not kept
    sha256: str
    size: int
    rejected_reason: str = ""


def byte_cap(scorer_id: str, site_limit: int = DEFAULT_MAX_SUBMISSION_BYTES) -> ByteCap:
    """The byte cap of the scorer's file layer and the reason it gives beyond it, taken
    from the scorer itself, so that an upload and ``python -m scoring score`` reject
    the same files with the same text. A site ceiling below the scorer's cap wins (and a
    scorer with no cap of its own gets the site's), with a reason that says it is the
    site's limit (the command line has no such limit)."""
    scorer = get_scorer(scorer_id)
    cap = scorer.max_solution_bytes
    if cap is None or site_limit < cap:
        return ByteCap(site_limit, f"solution exceeds {site_limit} bytes (FrameLedger upload limit)")
    return ByteCap(cap, scorer.over_cap_reason)


def read_capped(chunks: Iterable[bytes], cap: ByteCap) -> tuple[bytes | None, str, int]:
    """Hash every byte, keep them only up to the cap: (content or None, sha256, size)."""
    digest = hashlib.sha256()
    kept: list[bytes] | None = []
    size = 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
        if kept is not None:
            if size > cap.limit:
                kept = None
            else:
                kept.append(chunk)
    return (b"".join(kept) if kept is not None else None), digest.hexdigest(), size


def make_file(label: str, name: str, chunks: Iterable[bytes], cap: ByteCap) -> SubmissionFile:
    content, sha256, size = read_capped(chunks, cap)
    return SubmissionFile(
        label=clean_label(label) or clean_label(label_for_path(name)) or "submission",
        name=posixpath.basename(name)[:300] or "submission",
        content=content,
        sha256=sha256,
        size=size,
        rejected_reason="" if content is not None else cap.reason,
    )


def clean_label(label: str | None) -> str:
    return " ".join(str(label or "").split())[:MAX_LABEL_CHARS]


def label_for_path(path: str) -> str:
    """The run name a file's path implies.

    ``rollouts/x.submitted-solution.json`` -> ``rollouts/x``; ``anchors/oracle/solution.json``
    -> ``anchors/oracle``; ``run-7.json`` -> ``run-7``.
    """
    path = path.replace("\\", "/").strip("/")
    directory, name = posixpath.split(path)
    if name.lower() in _ROLE_NAMES and directory:
        return directory
    for suffix in _ROLE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return posixpath.join(directory, name[: -len(suffix)])
    stem, extension = posixpath.splitext(name)
    return posixpath.join(directory, stem if extension else name)


def _common_directory(paths: list[str]) -> str:
    if len(paths) < 2:
        return posixpath.dirname(paths[0]) if paths else ""
    common = posixpath.commonpath(paths)
    return common if all(p != common for p in paths) else posixpath.dirname(common)


def _hidden(path: str) -> bool:
    return path.startswith("__MACOSX/") or any(part.startswith(".") for part in path.split("/"))


def included(path: str, include: str | None) -> bool:
    if not include:
        return True
    return fnmatch.fnmatch(posixpath.basename(path), include) or fnmatch.fnmatch(path, include)


def expand_zip(
    archive: BinaryIO, cap: ByteCap, *, include: str | None = None, limits: ZipLimits | None = None
) -> list[SubmissionFile]:
    """Every file of a zip as a submission, labelled by its path (the common leading
    folder removed). Folders, dot files and ``__MACOSX`` entries are skipped. An archive
    over any of ``limits`` is refused as a whole (:class:`UploadRefused`)."""
    limits = limits or ZipLimits()
    check_directory(archive, limits)
    try:
        zipped = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise UploadRefused(f"not a readable zip archive: {error}") from None
    with zipped:
        if len(zipped.infolist()) > limits.entries:
            raise UploadRefused(f"the archive holds {len(zipped.infolist())} entries; at most {limits.entries}")
        entries = [
            info
            for info in zipped.infolist()
            if not info.is_dir() and not _hidden(info.filename) and included(info.filename, include)
        ]
        if len(entries) > MAX_BATCH_FILES:
            raise UploadRefused(f"the archive holds {len(entries)} files; a batch takes at most {MAX_BATCH_FILES}")
        check_declared(entries, limits)
        names = [info.filename.replace("\\", "/").strip("/") for info in entries]
        prefix = _common_directory(names)
        files = []
        kept = 0
        inflated = InflateCounter(limits)
        for info, name in zip(entries, names, strict=True):
            relative = name[len(prefix) :].lstrip("/") if prefix else name
            try:
                with zipped.open(info) as handle:
                    chunks = inflated.count(name, info.compress_size, _chunks(handle))
                    item = make_file(label_for_path(relative), relative, chunks, cap)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, zlib.error) as error:
                raise UploadRefused(f"cannot read {name} from the archive: {error}") from None
            kept += len(item.content or b"")
            if kept > MAX_BATCH_KEPT_BYTES:
                raise UploadRefused(f"the batch holds more than {MAX_BATCH_KEPT_BYTES} bytes of submissions")
            files.append(item)
    if not files:
        raise UploadRefused("the archive holds no submission files")
    return files


def check_directory(archive: BinaryIO, limits: ZipLimits) -> None:
    """The entry count and central-directory size the archive's end record declares,
    read before ``zipfile`` parses (and holds in memory) the whole directory."""
    try:
        end = zipfile._EndRecData(archive)  # the stdlib's reader of the end record
    except (OSError, AttributeError, struct.error):
        end = None
    archive.seek(0)
    if end is None:
        return  # not a zip: ZipFile says so
    if end[zipfile._ECD_ENTRIES_TOTAL] > limits.entries:
        raise UploadRefused(f"the archive holds {end[zipfile._ECD_ENTRIES_TOTAL]} entries; at most {limits.entries}")
    if end[zipfile._ECD_SIZE] > limits.directory_bytes:
        raise UploadRefused(f"the archive's directory is over {limits.directory_bytes} bytes")


def check_declared(entries: list[zipfile.ZipInfo], limits: ZipLimits) -> None:
    total = 0
    for info in entries:
        declared = info.file_size
        if declared > limits.entry_bytes:
            raise UploadRefused(
                f"{info.filename} declares {declared} bytes; an entry may inflate to {limits.entry_bytes}"
            )
        if declared > limits.ratio_grace and declared > limits.ratio * max(info.compress_size, 1):
            raise UploadRefused(f"{info.filename} is compressed more than {limits.ratio}:1")
        total += declared
    if total > limits.total_bytes:
        raise UploadRefused(f"the archive declares {total} bytes; entries may inflate to {limits.total_bytes} in all")


class InflateCounter:
    """Counts inflated bytes while they stream: per entry, in all, and per compressed byte.

    ``zipfile`` itself stops an entry at its declared size and then checks the CRC, so
    with the declared sizes checked first this is the second line: it holds whatever
    the reader underneath does."""

    def __init__(self, limits: ZipLimits):
        self.limits = limits
        self.total = 0

    def count(self, name: str, compressed: int, chunks: Iterable[bytes]) -> Iterator[bytes]:
        limits, size = self.limits, 0
        for chunk in chunks:
            size += len(chunk)
            self.total += len(chunk)
            if size > limits.entry_bytes:
                raise UploadRefused(f"{name} inflates past {limits.entry_bytes} bytes; the cap for one entry")
            if self.total > limits.total_bytes:
                raise UploadRefused(f"the archive's entries inflate past {limits.total_bytes} bytes in all")
            if size > limits.ratio_grace and size > limits.ratio * max(compressed, 1):
                raise UploadRefused(f"{name} is compressed more than {limits.ratio}:1")
            yield chunk


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    while True:
        chunk = handle.read(CHUNK)
        if not chunk:
            return
        yield chunk
