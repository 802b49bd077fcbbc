"""The steps of an ingest that the one-pass and the chunked paths share: progress on the
job row, the derived files finished, placed and committed, and a failure cleaned up.

``annotator.actions.ingest`` (one pass, remux first) and ``annotator.actions.ingest_chunks``
(the chunked proxy) both build on these; neither imports the other's module for them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.actions.search import request_search_index
from annotator.base.disk import full_disk_reason
from annotator.base.media.errors import MediaError
from annotator.base.media.frametable import FrameTable
from annotator.base.media.thumbs import make_thumbnails
from annotator.models import Job, Video
from annotator.models.audit_log import record

logger = logging.getLogger("annotator.actions.ingest")

# Progress milestones of one ingest (fractions of the job).
P_HASHED, P_PROBED, P_PROXY, P_TABLE, P_THUMBS = 0.05, 0.08, 0.88, 0.9, 0.97


class Progress:
    """Writes a job's progress to its row, at most twice a second."""

    def __init__(self, job: Job):
        self.job = job
        self._last = 0.0

    def __call__(self, fraction: float, message: str | None = None, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        fields = {"progress": round(min(max(fraction, 0.0), 1.0), 4), "updated_at": timezone.now()}
        if message is not None:
            fields["message"] = message
            self.job.message = message
        Job.objects.filter(pk=self.job.pk).update(**fields)
        self.job.progress = fields["progress"]


def file_sha256(path: str | Path, chunk: int = 1024 * 1024) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def finish_derived(workdir: Path, progress: Progress, sha: str, probed, table: FrameTable, report: dict) -> dict:
    """The frame table and thumbnails of the proxy in ``workdir``."""
    proxy = workdir / "proxy.mp4"
    progress(P_PROXY, "Writing the frame table.", force=True)
    frames = workdir / "frames.json"
    frames.write_text(table.dumps(), encoding="utf-8")
    proxy_sha = file_sha256(proxy)
    progress(P_TABLE, "Making timeline thumbnails.", force=True)
    thumbs = workdir / "thumbs.jpg"
    thumb_meta = make_thumbnails(proxy, table, thumbs)
    progress(P_THUMBS, "Saving.", force=True)
    return {
        "sha256": sha,
        "probed": probed,
        "table": table,
        "report": report,
        "proxy_sha256": proxy_sha,
        "frames_sha256": file_sha256(frames),
        "thumbnail_meta": thumb_meta,
        "files": {"proxy": proxy, "frame_table": frames, "thumbnails": thumbs},
    }


def place(files: dict[str, Path], video: Video, stem: str) -> dict[str, str]:
    """Move finished files into MEDIA_ROOT; returns field -> storage name."""
    folders = {
        "remux": f"videos/remux/{stem}.mp4",
        "proxy": f"videos/proxy/{stem}.mp4",
        "full": f"videos/full/{stem}.mp4",
        "frame_table": f"videos/frames/{stem}.json",
        "thumbnails": f"videos/thumbs/{stem}.jpg",
    }
    targets = {field: name for field, name in folders.items() if field in files}
    placed: dict[str, str] = {}
    root = Path(settings.MEDIA_ROOT)
    try:
        for field, name in targets.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(files[field], target)
            placed[field] = name
    except BaseException:
        remove_media(placed.values())
        raise
    return placed


def remove_media(names) -> None:
    root = Path(settings.MEDIA_ROOT)
    for name in names:
        if name:
            (root / name).unlink(missing_ok=True)


def fail_ingest(video: Video, job: Job, message: str) -> None:
    """Fail the job. The video fails too, unless its remux already made it annotatable:
    then it stays ready on the remux (packets may use it), with the proxy's error."""
    with transaction.atomic():
        if Job.objects.select_for_update().filter(pk=job.pk, status=Job.Status.DONE).exists():
            return  # a superseded duplicate (a join whose lease was handed on) failing late
        annotatable = Video.objects.filter(pk=video.pk, status=Video.Status.READY).exclude(remux="").exists()
        status = Video.Status.READY if annotatable else Video.Status.FAILED
        Video.objects.filter(pk=video.pk).update(status=status, error=message)
        Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED, message=message, updated_at=timezone.now())
        action = "video.proxy_failed" if annotatable else "video.ingest_failed"
        record(job.created_by, action, video, details={"job": job.pk, "error": message})
    video.status, video.error = status, message
    job.status, job.message = Job.Status.FAILED, message


def set_probe_fields(row: Video, sha: str, probed, table: FrameTable) -> None:
    row.sha256 = sha
    row.codec = probed.codec
    row.width, row.height, row.rotation = probed.width, probed.height, probed.rotation
    row.frame_rate_num, row.frame_rate_den = probed.rate.numerator, probed.rate.denominator
    row.frame_count = table.frame_count
    row.duration = probed.duration


class clean_failure:
    """Context: a MediaError fails the video cleanly; anything else too, then re-raises.
    A failure that came of a full disk says so (``annotator.base.disk``) and is not re-raised.

    Yields a dict the body fills with placed files (removed again on failure).
    """

    def __init__(self, video: Video, job: Job):
        self.video, self.job, self.placed = video, job, {}

    def __enter__(self) -> dict[str, str]:
        return self.placed

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None:
            return False
        remove_media(self.placed.values())
        full = full_disk_reason("Ingest", exc) if isinstance(exc, Exception) else None
        if full is not None:
            logger.error("ingest of video %s: %s", self.video.pk, full)
            fail_ingest(self.video, self.job, full)
            return True
        if isinstance(exc, MediaError):
            fail_ingest(self.video, self.job, str(exc))
            return True
        if isinstance(exc, Exception):
            logger.exception("ingest of video %s failed", self.video.pk, exc_info=exc)
            fail_ingest(self.video, self.job, f"Ingest failed unexpectedly ({type(exc).__name__}: {exc}).")
        return False


def same_timing(a: FrameTable, b: FrameTable) -> bool:
    """Do two tables time every frame identically (exact rationals; keyframes aside)?"""
    if a.frame_count != b.frame_count or a.end * a.time_base != b.end * b.time_base:
        return False
    return all(pa * a.time_base == pb * b.time_base for pa, pb in zip(a.pts, b.pts, strict=True))


def commit_proxy(video: Video, job: Job, derived: dict, placed: dict[str, str]) -> None:
    probed = derived["probed"]
    table: FrameTable = derived["table"]
    with transaction.atomic():
        row = Video.objects.select_for_update().get(pk=video.pk)
        if row.remux and not same_timing(FrameTable.load(row.frame_table.path), table):
            raise MediaError("the proxy's frame table differs from the remux's")
        previous = [row.proxy.name, row.frame_table.name, row.thumbnails.name]
        set_probe_fields(row, derived["sha256"], probed, table)
        row.proxy.name = placed["proxy"]
        row.proxy_sha256 = derived["proxy_sha256"]
        row.frame_table.name = placed["frame_table"]
        row.thumbnails.name = placed["thumbnails"]
        row.thumbnail_meta = derived["thumbnail_meta"]
        row.ingest_report = derived["report"]
        row.status, row.error = Video.Status.READY, ""
        row.save()
        result = {
            "frame_count": table.frame_count,
            "frame_rate": [row.frame_rate_num, row.frame_rate_den],
            "codec": probed.codec,
            "duration": probed.duration,
            "source_start": probed.start_time,
            "rotation": probed.rotation,
            "proxy_sha256": row.proxy_sha256,
            "source_frame_count": probed.frame_count,
            "timestamps": probed.timestamps,
            "dropped_frames": [d["source_index"] for d in derived["report"].get("dropped", [])],
            "chunks": derived.get("chunks", 1),
        }
        for key in ("remux", "remux_refused"):
            if key in (job.result or {}):
                result[key] = job.result[key]
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.DONE, progress=1.0, message="Ready.", result=result, updated_at=timezone.now()
        )
        record(
            job.created_by,
            "video.ingest",
            row,
            hashes={
                "source_sha256": row.sha256,
                "proxy_sha256": row.proxy_sha256,
                "frame_table_sha256": derived["frames_sha256"],
            },
            details={"job": job.pk, **result},
        )
        stale = [name for name in previous if name and name not in placed.values()]
        transaction.on_commit(lambda: remove_media(stale))
        request_search_index(row)  # a moment packet's video: its search index, from the proxy
    video.refresh_from_db()
    job.refresh_from_db()
