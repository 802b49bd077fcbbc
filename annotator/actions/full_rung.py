"""The ladder's on-demand rung: the video at its own height, made when someone asks.

The proxy every annotator plays is capped at 720 lines (seeks stay fast, the file
small). When detail matters (a ball on a far court), anyone on a packet may ask for the
**full** rendition: the same recipe (H.264, GOP 12, no B-frames, peak bit rate capped
at the source's) at the source's own display height, encoded from the original by the
Celery task ``annotator.ingest_full`` on the ingest queue, checked to time every frame
exactly as the video's frame table (the player switches to it on the same frame), and
served like the other renditions at a versioned URL. One full rendition per video,
shared by every packet on it; asking again while it is made, or once it exists, changes
nothing.

A source no taller than the proxy needs no full rung (the proxy already has its height):
asking is refused with 409. So is asking before the video is ready for annotation.
"""

from __future__ import annotations

import logging
import secrets
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.actions.ingest_steps import Progress, file_sha256, place, remove_media, same_timing
from annotator.base.errors import Conflict
from annotator.base.media.errors import MediaError
from annotator.base.media.frametable import FrameTable
from annotator.base.media.probe import probe
from annotator.base.media.proxy import PROXY_MAX_HEIGHT, make_proxy
from annotator.base.queue import INGEST_FULL, enqueue_on_commit
from annotator.models import AuditEntry, Job, Video
from annotator.models.audit_log import record

logger = logging.getLogger(__name__)

FULL_JOB_KIND = "full_rendition"


def display_size(video: Video) -> tuple[int, int]:
    """The source's size as shown (rotation applied), as the proxy recipe sees it."""
    if abs(video.rotation) % 180 == 90:
        return video.height, video.width
    return video.width, video.height


def full_needed(video: Video) -> bool:
    return display_size(video)[1] > PROXY_MAX_HEIGHT


def _latest_job(video: Video) -> Job | None:
    return Job.objects.filter(video=video, kind=FULL_JOB_KIND).order_by("-created_at", "-pk").first()


def full_rung_state(video: Video) -> dict:
    """What a player needs to know of the full rung (never who asked for it)."""
    height = display_size(video)[1]
    state = {
        "status": "none",
        "height": height,
        "proxy_height": min(height, PROXY_MAX_HEIGHT),
        "progress": None,
        "message": "",
    }
    if video.full:
        state.update(status="ready", progress=1.0)
    elif video.status != Video.Status.READY or not video.frame_table:
        state.update(status="unavailable", message="The video is not ready for annotation yet.")
    elif not full_needed(video):
        state.update(status="not_needed", message=f"The proxy already has the video's own height ({height} lines).")
    elif (job := _latest_job(video)) is not None and job.status != Job.Status.DONE:
        state.update(status=job.status, progress=job.progress, message=job.message)
    return state


def asked_for_full(video: Video, user) -> bool:
    """Whether ``user`` asked for the video's full rendition (joining a request counts)."""
    return AuditEntry.objects.filter(
        operation="video.full_requested", object_type=Video._meta.label, object_id=str(video.pk), actor_id=user.pk
    ).exists()


def without_progress(state: dict) -> dict:
    """The state as someone who has not asked sees it: a rendition being made (or failed)
    for someone else reads "none" (``access.sees_rendition_progress``)."""
    if state["status"] in {Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.FAILED}:
        return {**state, "status": "none", "progress": None, "message": ""}
    return state


def do_request_full_rendition(*, actor, video: Video) -> tuple[dict, bool]:
    """Queue the full rendition of ``video`` unless it exists or is being made.

    Returns (state, queued now). Precondition: ``actor`` may see a packet on the video.
    """
    with transaction.atomic():
        row = Video.objects.select_for_update().get(pk=video.pk)
        state = full_rung_state(row)
        if state["status"] in {"unavailable", "not_needed"}:
            raise Conflict(state["message"])
        if state["status"] in {Job.Status.QUEUED, Job.Status.RUNNING} and not asked_for_full(row, actor):
            # joining a request made by someone else: recorded, so that this person now sees it
            job = _latest_job(row)
            record(actor, "video.full_requested", row, details={"job": job.pk, "height": state["height"]})
        if state["status"] in {"ready", Job.Status.QUEUED, Job.Status.RUNNING}:
            return state, False
        job = Job.objects.create(
            kind=FULL_JOB_KIND,
            video=row,
            created_by=actor,
            message=f"Queued: the full rendition ({state['height']} lines).",
        )
        record(actor, "video.full_requested", row, details={"job": job.pk, "height": state["height"]})
        enqueue_on_commit(INGEST_FULL, row.pk, job.pk)
    return full_rung_state(row), True


def do_encode_full(video: Video, job: Job) -> None:
    """Encode, check and commit the full rendition (the ``annotator.ingest_full`` task)."""
    with transaction.atomic():
        row = Job.objects.select_for_update().filter(pk=job.pk).first()
        if row is None or row.status in {Job.Status.DONE, Job.Status.FAILED}:
            return  # deleted, or a redelivered message after the outcome
        Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, updated_at=timezone.now())
    workdir = Path(settings.MEDIA_ROOT) / "tmp" / f"full-{video.pk}-{secrets.token_hex(6)}"
    workdir.mkdir(parents=True)
    progress = Progress(job)
    placed: list[str] = []
    try:
        progress(0.0, f"Encoding the full rendition ({display_size(video)[1]} lines).", force=True)
        probed = probe(video.original.path)
        dest = workdir / "full.mp4"
        table = make_proxy(video.original.path, dest, probed, max_height=display_size(video)[1], progress=progress)
        if not same_timing(FrameTable.load(video.frame_table.path), table):
            raise MediaError("the full rendition's frames are timed differently from the video's frame table")
        sha = file_sha256(dest)
        placed = list(place({"full": dest}, video, f"{video.pk}-{sha[:16]}").values())
        with transaction.atomic():
            row = Video.objects.select_for_update().get(pk=video.pk)
            previous = row.full.name
            row.full.name, row.full_sha256 = placed[0], sha
            row.save(update_fields=["full", "full_sha256"])
            size = (Path(settings.MEDIA_ROOT) / placed[0]).stat().st_size
            result = {"full_sha256": sha, "height": probed.display_size[1], "bytes": size}
            Job.objects.filter(pk=job.pk).update(
                status=Job.Status.DONE, progress=1.0, message="Ready.", result=result, updated_at=timezone.now()
            )
            record(job.created_by, "video.full_rendition", row, hashes={"full_sha256": sha}, details={"job": job.pk})
            if previous and previous != placed[0]:
                transaction.on_commit(lambda: remove_media([previous]))
    except Exception as exc:
        remove_media(placed)
        message = str(exc) if isinstance(exc, MediaError) else f"Encoding failed unexpectedly ({type(exc).__name__})."
        if not isinstance(exc, MediaError):
            logger.exception("full rendition of video %s failed", video.pk)
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED, message=message, updated_at=timezone.now())
            record(job.created_by, "video.full_failed", video, details={"job": job.pk, "error": message})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
