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

import hashlib
import logging
import os
import re
import shutil
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotator.actions.audit import record
from annotator.errors import InvalidInput
from annotator.media.errors import MediaError
from annotator.media.frametable import FrameTable
from annotator.media.probe import probe
from annotator.media.proxy import PROXY_GOP, make_proxy
from annotator.media.remux import make_remux, not_browser_playable
from annotator.media.thumbs import keyframe_thumbnail_indices, make_thumbnails
from annotator.media.timeline import dropped_report
from annotator.models import Job, Video
from annotator.queue import INGEST_PROXY, INGEST_VIDEO, enqueue_on_commit

logger = logging.getLogger(__name__)

INGEST_JOB_KIND = "ingest"
_SAFE_SUFFIX = re.compile(r"^\.[a-z0-9]{1,8}$")

# Progress milestones of one ingest (fractions of the job).
_P_HASHED, _P_PROBED, _P_PROXY, _P_TABLE, _P_THUMBS = 0.05, 0.08, 0.88, 0.9, 0.97


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
    except BaseException:
        if stored_name:
            Video.original.field.storage.delete(stored_name)
        raise
    return video, job


class _Progress:
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


def _hash_and_probe(source: Path, progress: _Progress):
    progress(0.0, "Hashing the source.", force=True)
    sha = file_sha256(source)
    progress(_P_HASHED, "Probing the source.", force=True)
    probed = probe(source)
    progress(
        _P_PROBED,
        f"Encoding the proxy ({probed.frame_count} frames, {probed.codec}, {probed.rate} fps).",
        force=True,
    )
    return sha, probed


def _derive(source: Path, workdir: Path, progress: _Progress, sha: str, probed) -> dict:
    """Every derived file, made in ``workdir`` in one pass. Returns what the Video row needs."""
    proxy = workdir / "proxy.mp4"
    report: dict = {}
    table = make_proxy(
        source,
        proxy,
        probed,
        gop=PROXY_GOP,
        progress=lambda f: progress(_P_PROBED + (_P_PROXY - _P_PROBED) * f),
        report=report,
    )
    return _finish_derived(workdir, progress, sha, probed, table, report)


def _finish_derived(workdir: Path, progress: _Progress, sha: str, probed, table: FrameTable, report: dict) -> dict:
    """The frame table and thumbnails of the proxy in ``workdir``."""
    proxy = workdir / "proxy.mp4"
    progress(_P_PROXY, "Writing the frame table.", force=True)
    frames = workdir / "frames.json"
    frames.write_text(table.dumps(), encoding="utf-8")
    proxy_sha = file_sha256(proxy)
    progress(_P_TABLE, "Making timeline thumbnails.", force=True)
    thumbs = workdir / "thumbs.jpg"
    thumb_meta = make_thumbnails(proxy, table, thumbs)
    progress(_P_THUMBS, "Saving.", force=True)
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


def _place(files: dict[str, Path], video: Video, stem: str) -> dict[str, str]:
    """Move finished files into MEDIA_ROOT; returns field -> storage name."""
    folders = {
        "remux": f"videos/remux/{stem}.mp4",
        "proxy": f"videos/proxy/{stem}.mp4",
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
        _remove(placed.values())
        raise
    return placed


def _remove(names) -> None:
    root = Path(settings.MEDIA_ROOT)
    for name in names:
        if name:
            (root / name).unlink(missing_ok=True)


def _fail(video: Video, job: Job, message: str) -> None:
    """Fail the job. The video fails too, unless its remux already made it annotatable:
    then it stays ready on the remux (packets may use it), with the proxy's error."""
    with transaction.atomic():
        annotatable = Video.objects.filter(pk=video.pk, status=Video.Status.READY).exclude(remux="").exists()
        status = Video.Status.READY if annotatable else Video.Status.FAILED
        Video.objects.filter(pk=video.pk).update(status=status, error=message)
        Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED, message=message, updated_at=timezone.now())
        action = "video.proxy_failed" if annotatable else "video.ingest_failed"
        record(job.created_by, action, video, details={"job": job.pk, "error": message})
    video.status, video.error = status, message
    job.status, job.message = Job.Status.FAILED, message


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
    progress = _Progress(job)
    workdir = _new_workdir(video)
    keep_workdir = False
    with _clean_failure(video, job) as placed:
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
    except that a failure leaves the video ready on its remux (see ``_fail``)."""
    progress = _Progress(job)
    workdir = _new_workdir(video)
    keep_workdir = False
    with _clean_failure(video, job) as placed:
        try:
            workdir.mkdir(parents=True)
            source = Path(video.original.path)
            probed = probe(source)
            if probed.frame_count != video.frame_count:
                raise MediaError("the source changed after its remux was made")
            progress(_P_PROBED, f"Encoding the proxy ({probed.frame_count} frames, {probed.codec}).", force=True)
            sha = video.sha256
            keep_workdir = _proxy_stage(video, job, source, workdir, progress, sha, probed, chunk_frames, placed)
        finally:
            if not keep_workdir:
                shutil.rmtree(workdir, ignore_errors=True)
    return video


def _proxy_stage(video, job, source, workdir, progress, sha, probed, chunk_frames, placed) -> bool:
    """Encode the proxy: queue its chunks (True: the workdir is theirs now) or make it here."""
    from annotator.actions.ingest_chunks import start_chunked

    if chunk_frames is None:
        chunk_frames = settings.FRAMELEDGER_INGEST_CHUNK_FRAMES
    if chunk_frames > 0 and start_chunked(video, job, source, workdir, sha, probed, chunk_frames):
        return True
    derived = _derive(source, workdir, progress, sha, probed)
    placed.update(_place(derived["files"], video, f"{video.pk}-{derived['proxy_sha256'][:16]}"))
    _commit(video, job, derived, placed)
    return False


def _remux_stage(video, job, source, workdir, progress, sha, probed, chunk_frames) -> bool:
    """Make, check and commit the remux; queue the proxy task. False: proxy first instead."""
    reason = not_browser_playable(source, probed)
    if reason is None:
        progress(_P_PROBED, "Remuxing the source for the browser.", force=True)
        try:
            table = make_remux(source, workdir / "remux.mp4", probed)
        except MediaError as exc:  # the proxy path decides whether the source is usable
            reason = f"the remux failed its checks ({exc})"
    if reason is not None:
        logger.info("video %s: proxy first, no remux: %s", video.pk, reason)
        return False
    files = {"remux": workdir / "remux.mp4", "frame_table": workdir / "frames.json"}
    files["thumbnails"] = workdir / "thumbs.jpg"
    files["frame_table"].write_text(table.dumps(), encoding="utf-8")
    progress(_P_PROBED, "Making timeline thumbnails.", force=True)
    # Tiles at the remux's keyframes (one decode each): seconds, not minutes, on long GOPs.
    # The proxy's commit replaces them with the usual evenly spaced sprite.
    thumb_meta = make_thumbnails(files["remux"], table, files["thumbnails"], indices=keyframe_thumbnail_indices(table))
    hashes = {"source_sha256": sha, "remux_sha256": file_sha256(files["remux"])}
    hashes["frame_table_sha256"] = file_sha256(files["frame_table"])
    placed = _place(files, video, f"{video.pk}-r{hashes['remux_sha256'][:16]}")
    try:
        _commit_remux(video, job, probed, table, thumb_meta, hashes, placed, chunk_frames)
    except BaseException:
        _remove(placed.values())
        raise
    return True


def _commit_remux(video, job, probed, table: FrameTable, thumb_meta, hashes, placed, chunk_frames) -> None:
    """The video ready for annotation on its remux; the job runs on with the proxy task."""
    report = dropped_report(probed.table, [], probed.timestamps)
    with transaction.atomic():
        row = Video.objects.select_for_update().get(pk=video.pk)
        _set_probe_fields(row, hashes["source_sha256"], probed, table)
        row.remux.name, row.remux_sha256 = placed["remux"], hashes["remux_sha256"]
        row.frame_table.name, row.thumbnails.name = placed["frame_table"], placed["thumbnails"]
        row.thumbnail_meta, row.ingest_report = thumb_meta, report
        row.status, row.error = Video.Status.READY, ""
        row.save()
        remux = {"sha256": row.remux_sha256, "annotatable_at": timezone.now().isoformat()}
        Job.objects.filter(pk=job.pk).update(
            progress=_P_PROBED,
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


def _set_probe_fields(row: Video, sha: str, probed, table: FrameTable) -> None:
    row.sha256 = sha
    row.codec = probed.codec
    row.width, row.height, row.rotation = probed.width, probed.height, probed.rotation
    row.frame_rate_num, row.frame_rate_den = probed.rate.numerator, probed.rate.denominator
    row.frame_count = table.frame_count
    row.duration = probed.duration


class _clean_failure:
    """Context: a MediaError fails the video cleanly; anything else too, then re-raises.

    Yields a dict the body fills with placed files (removed again on failure).
    """

    def __init__(self, video: Video, job: Job):
        self.video, self.job, self.placed = video, job, {}

    def __enter__(self) -> dict[str, str]:
        return self.placed

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None:
            return False
        _remove(self.placed.values())
        if isinstance(exc, MediaError):
            _fail(self.video, self.job, str(exc))
            return True
        if isinstance(exc, Exception):
            logger.exception("ingest of video %s failed", self.video.pk, exc_info=exc)
            _fail(self.video, self.job, f"Ingest failed unexpectedly ({type(exc).__name__}: {exc}).")
        return False


def same_timing(a: FrameTable, b: FrameTable) -> bool:
    """Do two tables time every frame identically (exact rationals; keyframes aside)?"""
    if a.frame_count != b.frame_count or a.end * a.time_base != b.end * b.time_base:
        return False
    return all(pa * a.time_base == pb * b.time_base for pa, pb in zip(a.pts, b.pts, strict=True))


def _commit(video: Video, job: Job, derived: dict, placed: dict[str, str]) -> None:
    probed = derived["probed"]
    table: FrameTable = derived["table"]
    with transaction.atomic():
        row = Video.objects.select_for_update().get(pk=video.pk)
        if row.remux and not same_timing(FrameTable.load(row.frame_table.path), table):
            raise MediaError("the proxy's frame table differs from the remux's")
        previous = [row.proxy.name, row.frame_table.name, row.thumbnails.name]
        _set_probe_fields(row, derived["sha256"], probed, table)
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
        if "remux" in (job.result or {}):
            result["remux"] = job.result["remux"]
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
        transaction.on_commit(lambda: _remove(stale))
    video.refresh_from_db()
    job.refresh_from_db()
