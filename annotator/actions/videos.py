"""Deleting a video: its row, its jobs, its original and every derived file, audited.

Allowed for maintainers on a video no packet uses, whatever its state except while an
ingest is running on it (the worker would write files for a row that no longer
exists): a failed upload, a ready video never put in a packet, an upload still
queued. A video some packet uses is refused (409) and nothing changes — ground truth
refers to its frames.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotator.actions.search import INDEX_DIR as SEARCH_INDEX_DIR
from annotator.base.errors import Conflict
from annotator.models import Video
from annotator.models.audit_log import record

FILE_FIELDS = ("original", "remux", "proxy", "full", "frame_table", "thumbnails")


def do_delete_video(*, actor, video: Video) -> dict:
    """Delete ``video`` and its files; returns what was removed (also in the audit entry).

    Precondition: the caller has checked that ``actor`` is a maintainer.
    """
    with transaction.atomic():
        row = Video.objects.select_for_update().get(pk=video.pk)
        packets = list(row.packets.values_list("pk", flat=True))
        if packets:
            raise Conflict(f"video {row.pk} is used by packet(s) {', '.join(map(str, packets))}; it cannot be deleted")
        if row.status == Video.Status.PROCESSING or row.jobs.filter(status="running").exists():
            raise Conflict(f"video {row.pk} is being ingested; delete it once the ingest has finished or failed")
        files = [getattr(row, name).name for name in FILE_FIELDS if getattr(row, name).name]
        details = {
            "title": row.title,
            "original_name": row.original_name,
            "status": row.status,
            "error": row.error,
            "frame_count": row.frame_count,
            "files": files,
            "jobs": list(row.jobs.values_list("pk", flat=True)),
        }
        record(
            actor,
            "video.delete",
            row,
            hashes={"source_sha256": row.sha256, "proxy_sha256": row.proxy_sha256},
            details=details,
        )
        pk = row.pk
        row.delete()  # its jobs go with it (cascade)
        transaction.on_commit(lambda: remove_video_files(pk, files))
    return details


def remove_video_files(video_id: int, names: list[str]) -> None:
    """The stored files, and any working directory an interrupted ingest left behind."""
    root = Path(settings.MEDIA_ROOT)
    for name in names:
        (root / name).unlink(missing_ok=True)
    shutil.rmtree(root / SEARCH_INDEX_DIR / str(video_id), ignore_errors=True)  # its moment-search index
    tmp = root / "tmp"
    if tmp.is_dir():
        for pattern in (f"ingest-{video_id}-*", f"full-{video_id}-*"):
            for leftover in tmp.glob(pattern):
                shutil.rmtree(leftover, ignore_errors=True)
