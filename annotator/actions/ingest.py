"""Video upload and ingest: the source stored, probed, proxied, tabulated, thumbnailed.

``do_register_upload`` runs in the web request: it stores the file, creates the
``Video`` and its ingest ``Job`` and enqueues the Celery task after commit.
``do_ingest_video`` runs in the worker and does the whole ingest, writing progress
to the ``Job`` row (any web process can relay it, whatever the channel layer).

Nothing half-made: every derived file is written into a private working directory
under ``MEDIA_ROOT/tmp/``; only when all of them exist and every check has passed are
they moved into place and the ``Video`` row updated, in one transaction. On any
failure the working directory is removed, files already moved are removed, and the
video and job say why in ``Video.error`` / ``Job.message``.

Storage: derived media are read by PyAV and served by byte range, so they live on the
local filesystem under ``MEDIA_ROOT`` (Django's default ``FileSystemStorage``).
"""

from __future__ import annotations

import logging
import re
import shutil
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotator.actions.ingest_chunks import start_chunked
from annotator.actions.ingest_steps import (
    P_HASHED,
    P_PROBED,
    P_PROXY,
    Progress,
    clean_failure,
    commit_proxy,
    file_sha256,
    finish_derived,
    place,
    remove_media,
    set_probe_fields,
)
from annotator.base.disk import is_out_of_space, out_of_space
from annotator.base.errors import InvalidInput
from annotator.base.media.errors import MediaError
from annotator.base.media.frametable import FrameTable
from annotator.base.media.probe import probe
from annotator.base.media.proxy import PROXY_GOP, make_proxy
from annotator.base.media.remux import make_remux, not_browser_playable
from annotator.base.media.thumbs import keyframe_thumbnail_indices, make_thumbnails
from annotator.base.media.timeline import dropped_report
from annotator.base.queue import INGEST_PROXY, INGEST_VIDEO, enqueue_on_commit
from annotator.models import Job, Video
from annotator.models.audit_log import record

logger = logging.getLogger(__name__)

INGEST_JOB_KIND = "ingest"
_SAFE_SUFFIX = re.compile(r"^\.[a-z0-9]{1,8}$")


def _suffix(name: str) -> str:
    suffix = Path(name or "").suffix.lower()
    return suffix if _SAFE_SUFFIX.match(suffix) else ".bin"


def do_register_upload(*, actor, uploaded_file: UploadedFile, title: str) -> tuple[Video, Job]:
    """Store an uploaded source video and queue its ingest.

    Precondition: the caller has checked that ``actor`` is a maintainer.
    """
    title = (title or "").strip()
    if not title:
        raise InvalidInput("title is required", field="title")
    if uploaded_file is None:
        raise InvalidInput("file is required", field="file")
    if uploaded_file.size == 0:
        raise InvalidInput("the uploaded file is empty", field="file")
    if uploaded_file.size > settings.FRAMELEDGER_MAX_VIDEO_BYTES:
        raise InvalidInput(
            f"the file is {uploaded_file.size} bytes; the limit is {settings.FRAMELEDGER_MAX_VIDEO_BYTES}",
            field="file",
        )
    stored_name = None
    try:
        with transaction.atomic():
            video = Video.objects.create(
                title=title[:300],
                original_name=(uploaded_file.name or "")[:300],
                size_bytes=uploaded_file.size,
                status=Video.Status.PENDING,
                created_by=actor,
            )
            video.original.save(f"{uuid.uuid4().hex}{_suffix(uploaded_file.name)}", uploaded_file, save=True)
            stored_name = video.original.name
            job = Job.objects.create(kind=INGEST_JOB_KIND, video=video, created_by=actor, message="Queued for ingest.")
            record(
                actor,
                "video.upload",
                video,
                details={"original_name": video.original_name, "size_bytes": video.size_bytes, "job": job.pk},
            )
            enqueue_on_commit(INGEST_VIDEO, video.pk, job.pk)
    except BaseException as error:
        if stored_name:
            Video.original.field.storage.delete(stored_name)
        if is_out_of_space(error):  # the storage wrote under a temporary name: nothing is left
            raise out_of_space(settings.MEDIA_ROOT) from error
        raise
    return video, job


def _hash_and_probe(source: Path, progress: Progress):
    """Hash and probe the source; the job's messages carry the figures (the upload page
    shows them as its steps: hashed, probed)."""
    size = source.stat().st_size
    progress(0.0, f"Hashing the source ({size:,} bytes).", force=True)
    started = time.monotonic()
    sha = file_sha256(source)
    seconds = time.monotonic() - started
    progress(P_HASHED, f"Hashed: SHA-256 {sha[:16]}… of {size:,} bytes in {seconds:.1f} s. Probing.", force=True)
    probed = probe(source)
    progress(P_PROBED, f"Probed: {probed_summary(probed)}. Encoding the proxy.", force=True)
    return sha, probed


def probed_summary(probed) -> str:
    width, height = probed.display_size
    kbps = f", {probed.bit_rate / 1000:,.0f} kbit/s" if probed.bit_rate else ""
    return f"{probed.frame_count:,} frames, {probed.codec} {width}x{height}, {probed.table.rate_label} fps{kbps}"


def _derive(source: Path, workdir: Path, progress: Progress, sha: str, probed) -> dict:
    """Every derived file, made in ``workdir`` in one pass. Returns what the Video row needs."""
    proxy = workdir / "proxy.mp4"
    report: dict = {}
    table = make_proxy(
        source,
        proxy,
        probed,
        gop=PROXY_GOP,
        progress=lambda f: progress(P_PROBED + (P_PROXY - P_PROBED) * f),
        report=report,
    )
    return finish_derived(workdir, progress, sha, probed, table, report)


def _new_workdir(video: Video) -> Path:
    return Path(settings.MEDIA_ROOT) / "tmp" / f"ingest-{video.pk}-{uuid.uuid4().hex[:12]}"


def do_ingest_video(
    video: Video, job: Job, *, chunk_frames: int | None = None, remux_first: bool | None = None
) -> Video:
    """Ingest ``video`` (its ``original`` file is stored), reporting on ``job``.

    Annotate first: when the source is browser-playable (``remux.not_browser_playable``)
    and ``remux_first`` (default: ``FRAMELEDGER_INGEST_REMUX_FIRST``), a faststart remux
    is made and committed with the frame table, so the video is ready for annotation at
    once; the proxy is then encoded by the ``annotator.ingest_proxy`` task
    (:func:`do_encode_proxy`) and the job stays running until it is done.

    Otherwise the proxy comes first, here: a source longer than ``chunk_frames`` (default:
    ``FRAMELEDGER_INGEST_CHUNK_FRAMES``) is encoded in chunks by ``annotator.ingest_chunk``
    tasks and finished by ``annotator.ingest_join`` (see ``annotator.actions.ingest_chunks``);
    this call then returns with the video still processing.

    Preconditions: called outside any transaction (a worker), once per job. Media
    errors end as a failed video and job with the reason; they are not raised. An
    unexpected exception is recorded the same way, then re-raised for the worker log.
    """
    if remux_first is None:
        remux_first = settings.FRAMELEDGER_INGEST_REMUX_FIRST
    Video.objects.filter(pk=video.pk).update(status=Video.Status.PROCESSING, error="")
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, progress=0.0, updated_at=timezone.now())
    progress = Progress(job)
    workdir = _new_workdir(video)
    keep_workdir = False
    with clean_failure(video, job) as placed:
        try:
            if not video.original or not Path(video.original.path).is_file():
                raise MediaError("the uploaded source file is missing")
            workdir.mkdir(parents=True)
            source = Path(video.original.path)
            sha, probed = _hash_and_probe(source, progress)
            if remux_first and _remux_stage(video, job, source, workdir, progress, sha, probed, chunk_frames):
                return video
            keep_workdir = _proxy_stage(video, job, source, workdir, progress, sha, probed, chunk_frames, placed)
        finally:
            if not keep_workdir:
                shutil.rmtree(workdir, ignore_errors=True)
    return video


def do_encode_proxy(video: Video, job: Job, *, chunk_frames: int | None = None) -> Video:
    """The proxy of a video already ready for annotation on its remux (the
    ``annotator.ingest_proxy`` task). Same guarantees as :func:`do_ingest_video`,
    except that a failure leaves the video ready on its remux (see ``fail_ingest``)."""
    progress = Progress(job)
    workdir = _new_workdir(video)
    keep_workdir = False
    with clean_failure(video, job) as placed:
        try:
            workdir.mkdir(parents=True)
            source = Path(video.original.path)
            probed = probe(source)
            if probed.frame_count != video.frame_count:
                raise MediaError("the source changed after its remux was made")
            progress(P_PROBED, f"Probed: {probed_summary(probed)}. Encoding the proxy.", force=True)
            sha = video.sha256
            keep_workdir = _proxy_stage(video, job, source, workdir, progress, sha, probed, chunk_frames, placed)
        finally:
            if not keep_workdir:
                shutil.rmtree(workdir, ignore_errors=True)
    return video


def _proxy_stage(video, job, source, workdir, progress, sha, probed, chunk_frames, placed) -> bool:
    """Encode the proxy: queue its chunks (True: the workdir is theirs now) or make it here."""
    if chunk_frames is None:
        chunk_frames = settings.FRAMELEDGER_INGEST_CHUNK_FRAMES
    if chunk_frames > 0 and start_chunked(video, job, source, workdir, sha, probed, chunk_frames):
        return True
    derived = _derive(source, workdir, progress, sha, probed)
    placed.update(place(derived["files"], video, f"{video.pk}-{derived['proxy_sha256'][:16]}"))
    commit_proxy(video, job, derived, placed)
    return False


def _remux_stage(video, job, source, workdir, progress, sha, probed, chunk_frames) -> bool:
    """Make, check and commit the remux; queue the proxy task. False: proxy first instead."""
    files = {"remux": workdir / "remux.mp4", "frame_table": workdir / "frames.json"}
    files["thumbnails"] = workdir / "thumbs.jpg"
    reason = not_browser_playable(source, probed)
    if reason is None:
        progress(P_PROBED, f"Probed: {probed_summary(probed)}. Remuxing the source for the browser.", force=True)
        try:
            table = make_remux(source, files["remux"], probed)
            progress(P_PROBED, "Making timeline thumbnails.", force=True)
            # Tiles at the remux's keyframes (one decode each): seconds, not minutes, on long
            # GOPs. The proxy's commit replaces them with the usual evenly spaced sprite.
            indices = keyframe_thumbnail_indices(table)
            thumb_meta = make_thumbnails(files["remux"], table, files["thumbnails"], indices=indices)
        except MediaError as exc:  # the proxy path decides whether the source is usable
            reason = f"the remux failed its checks ({exc})"
    if reason is not None:
        logger.info("video %s: proxy first, no remux: %s", video.pk, reason)
        files["remux"].unlink(missing_ok=True)
        files["thumbnails"].unlink(missing_ok=True)
        # Said on the job (and kept in its final result): why annotation waits for the proxy.
        job.result = {**(job.result or {}), "remux_refused": reason}
        Job.objects.filter(pk=job.pk).update(result=job.result)
        return False
    files["frame_table"].write_text(table.dumps(), encoding="utf-8")
    hashes = {"source_sha256": sha, "remux_sha256": file_sha256(files["remux"])}
    hashes["frame_table_sha256"] = file_sha256(files["frame_table"])
    placed = place(files, video, f"{video.pk}-r{hashes['remux_sha256'][:16]}")
    try:
        _commit_remux(video, job, probed, table, thumb_meta, hashes, placed, chunk_frames)
    except BaseException:
        remove_media(placed.values())
        raise
    return True


def _commit_remux(video, job, probed, table: FrameTable, thumb_meta, hashes, placed, chunk_frames) -> None:
    """The video ready for annotation on its remux; the job runs on with the proxy task."""
    report = dropped_report(probed.table, [], probed.timestamps, probed.repairs)
    with transaction.atomic():
        row = Video.objects.select_for_update().get(pk=video.pk)
        set_probe_fields(row, hashes["source_sha256"], probed, table)
        row.remux.name, row.remux_sha256 = placed["remux"], hashes["remux_sha256"]
        row.frame_table.name, row.thumbnails.name = placed["frame_table"], placed["thumbnails"]
        row.thumbnail_meta, row.ingest_report = thumb_meta, report
        row.status, row.error = Video.Status.READY, ""
        row.save()
        remux = {"sha256": row.remux_sha256, "annotatable_at": timezone.now().isoformat()}
        Job.objects.filter(pk=job.pk).update(
            progress=P_PROBED,
            message="Ready for annotation on the remux; encoding the proxy.",
            result={"remux": remux},
            updated_at=timezone.now(),
        )
        record(
            job.created_by,
            "video.remux",
            row,
            hashes=hashes,
            details={"job": job.pk, "frame_count": table.frame_count, "codec": probed.codec},
        )
        enqueue_on_commit(INGEST_PROXY, video.pk, job.pk, chunk_frames)
    job.result = {"remux": remux}
