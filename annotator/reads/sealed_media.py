"""A video's media files against the hashes its ingest recorded (signed audit entries).

Ingest records the SHA-256 of what it placed: ``video.remux`` (source, remux, frame table),
``video.ingest`` (source, proxy, frame table), ``video.full_rendition`` (full). The latest
authentic record of each wins (the proxy's frame table replaces the remux's). Then:

- **on serve, cheap**: the row's ``remux_sha256``, ``proxy_sha256`` and ``full_sha256`` columns
  must equal the recorded ones, and the frame table (small, and what maps every frozen frame
  number to a picture) is hashed in full whenever it is served or loaded (cached by path, size
  and modification time);
- **in full**: ``verify_integrity --media`` hashes every rendition file against its record.

A mismatch is ``TamperedData`` naming the video (``integrity_error``), never the changed file.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache

from annotator.models import AuditEntry, Video
from annotator.reads.integrity import authentic, fail

MEDIA_OPERATIONS = ("video.remux", "video.ingest", "video.full_rendition")
# The recorded hash -> the row's column that must carry it, and the file it covers.
RENDITION_COLUMNS = {"remux_sha256": "remux", "proxy_sha256": "proxy", "full_sha256": "full"}


def media_seals(video: Video) -> dict[str, str]:
    """The latest recorded hash of each of the video's files (empty: ingested before records)."""
    found: dict[str, str] = {}
    entries = AuditEntry.objects.filter(
        object_type=Video._meta.label, object_id=str(video.pk), operation__in=MEDIA_OPERATIONS
    ).order_by("seq")
    for entry in authentic(entries):
        found.update({k: v for k, v in entry.hashes.items() if isinstance(v, str)})
    return found


@lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str) -> str:
    stat = os.stat(path)
    return _file_sha256(path, stat.st_size, stat.st_mtime_ns)


def column_problem(video: Video, seals: dict[str, str]):
    for key, column in RENDITION_COLUMNS.items():
        if key in seals and getattr(video, column) and getattr(video, key) != seals[key]:
            return f"its {column} SHA-256 differs from the one its ingest recorded", seals[key], getattr(video, key)
    return None


def frame_table_problem(video: Video, seals: dict[str, str]):
    recorded = seals.get("frame_table_sha256")
    if recorded is None or not video.frame_table:
        return None
    actual = file_sha256(video.frame_table.path)
    if actual != recorded:
        return "its frame table (frames.json) differs from the one its ingest recorded", recorded, actual
    return None


def verified_media(video: Video) -> Video:
    """The video, once its rendition columns and its frame table match their records."""
    seals = media_seals(video)
    found = column_problem(video, seals) or frame_table_problem(video, seals)
    if found is not None:
        raise fail(video, found)
    return video


def media_problems(video: Video) -> list[tuple[str, str, str]]:
    """Every file of the video hashed in full against its record (``verify_integrity --media``)."""
    seals = media_seals(video)
    problems = [found for found in (column_problem(video, seals), frame_table_problem(video, seals)) if found]
    for key, column in RENDITION_COLUMNS.items():
        field = getattr(video, column)
        if key not in seals or not field:
            continue
        try:
            stat = os.stat(field.path)
            actual = _file_sha256.__wrapped__(field.path, stat.st_size, stat.st_mtime_ns)  # read now, never cached
        except FileNotFoundError:
            actual = "missing"
        if actual != seals[key]:
            problems.append((f"its {column} file differs from the one its ingest recorded", seals[key], actual))
    return problems
