"""Turning uploads (one file, several files, a zip) into labelled submission files.

Size limits come from the scorer's own caps: a file over the cap is still recorded
(name, size, SHA-256 of everything uploaded) but its bytes are not kept, and it is
scored with the reason the scorer's file layer gives for it (``python -m scoring``
reads such a file the same way). Scorers without a byte cap (the break-point ledger)
get the site-wide ``FRAMELEDGER_MAX_SUBMISSION_BYTES`` ceiling.
"""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from scoring import egocentric, get_scorer, moments

DEFAULT_MAX_SUBMISSION_BYTES = 16 * 1024 * 1024
MAX_BATCH_FILES = 5000
MAX_BATCH_KEPT_BYTES = 512 * 1024 * 1024
MAX_LABEL_CHARS = 200
CHUNK = 1024 * 1024

# Suffixes that name the file's role, not the run (longest first).
_ROLE_SUFFIXES = (".submitted-solution.json", ".solution.jsonl", ".solution.json", ".submission.json")
_ROLE_NAMES = {"solution.json", "solution.jsonl", "submission.json", "submission.jsonl", "submitted-solution.json"}


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
    """The byte cap of a scorer's file layer and the reason it gives beyond it."""
    kind = get_scorer(scorer_id).kind
    if kind == "actions":
        limit = egocentric.MAX_SOLUTION_BYTES
        return ByteCap(limit, f"solution exceeds {limit} bytes")
    if kind == "moments":
        limit = moments.MAX_SOLUTION_BYTES
        return ByteCap(limit, f"submission exceeds {limit} bytes")
    return ByteCap(site_limit, f"solution exceeds {site_limit} bytes (FrameLedger upload limit)")


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


def expand_zip(archive: BinaryIO, cap: ByteCap, *, include: str | None = None) -> list[SubmissionFile]:
    """Every file of a zip as a submission, labelled by its path (the common leading
    folder removed). Folders, dot files and ``__MACOSX`` entries are skipped."""
    try:
        zipped = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise UploadRefused(f"not a readable zip archive: {error}") from None
    with zipped:
        entries = [
            info
            for info in zipped.infolist()
            if not info.is_dir() and not _hidden(info.filename) and included(info.filename, include)
        ]
        if len(entries) > MAX_BATCH_FILES:
            raise UploadRefused(f"the archive holds {len(entries)} files; a batch takes at most {MAX_BATCH_FILES}")
        names = [info.filename.replace("\\", "/").strip("/") for info in entries]
        prefix = _common_directory(names)
        files = []
        kept = 0
        for info, name in zip(entries, names, strict=True):
            relative = name[len(prefix) :].lstrip("/") if prefix else name
            try:
                with zipped.open(info) as handle:
                    item = make_file(label_for_path(relative), relative, _chunks(handle), cap)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as error:
                raise UploadRefused(f"cannot read {name} from the archive: {error}") from None
            kept += len(item.content or b"")
            if kept > MAX_BATCH_KEPT_BYTES:
                raise UploadRefused(f"the batch holds more than {MAX_BATCH_KEPT_BYTES} bytes of submissions")
            files.append(item)
    if not files:
        raise UploadRefused("the archive holds no submission files")
    return files


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    while True:
        chunk = handle.read(CHUNK)
        if not chunk:
            return
        yield chunk
