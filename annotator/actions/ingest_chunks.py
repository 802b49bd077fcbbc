"""Chunked ingest: the proxy encoded by many Celery tasks, joined by one.

``do_ingest_video`` hashes and probes the source, then (for a source longer than one
chunk) calls :func:`start_chunked`: the chunk plan is written to the ingest's working
directory under ``MEDIA_ROOT/tmp/`` (shared by every worker), the job row records the
plan, and one ``annotator.ingest_chunk`` task per chunk is queued after commit.

Each chunk task (:func:`do_encode_chunk`) encodes its range (idempotent file output,
see ``annotator.base.media.chunks``), then, locking the job row, marks its chunk done and
aggregates progress. The task that completes the last chunk queues
``annotator.ingest_join`` exactly once (:func:`do_join_chunks`): the chunks are joined
by stream copy, checked frame for frame against the source, thumbnailed and committed
as in a single-pass ingest. A failure anywhere fails the video and job with the reason
and removes the working directory; later chunk tasks of a failed job do nothing.

No Celery chord: the project keeps job state in the database and runs without a
result backend, so the "all chunks done" barrier is the job row, locked.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.actions.ingest_leases import (
    JOIN,
    LeaseKeeper,
    holds_lease,
    new_owner,
    requeue_consumed_chunks,
    take_lease,
)
from annotator.actions.ingest_steps import (
    P_PROBED,
    P_PROXY,
    Progress,
    clean_failure,
    commit_proxy,
    finish_derived,
    place,
)
from annotator.base.media.chunks import (
    ChunkState,
    chunk_path,
    encode_chunk,
    join_chunks,
    missing_chunks,
    prepare_chunks,
)
from annotator.base.media.errors import MediaError
from annotator.base.media.probe import probe
from annotator.base.media.proxy import PROXY_GOP
from annotator.base.media.timeline import dropped_report
from annotator.base.queue import INGEST_CHUNK, INGEST_JOIN, enqueue_each_on_commit, enqueue_on_commit
from annotator.models import Job, Video


def _workdir(job: Job) -> Path:
    return Path(settings.MEDIA_ROOT) / job.result["chunked"]["workdir"]


def start_chunked(video: Video, job: Job, source: Path, workdir: Path, sha: str, probed, chunk_frames: int) -> bool:
    """Plan the chunks and queue their tasks; False when the source needs one pass."""
    state = prepare_chunks(source, workdir, probed, chunk_frames, gop=PROXY_GOP)
    if state is None:
        return False
    count = len(state.chunks)
    chunked = {
        "workdir": str(workdir.relative_to(settings.MEDIA_ROOT)),
        "sha256": sha,
        "chunks": count,
        "done": [],
        "join_queued": False,
        "planned_at": time.time(),  # the sweep's clock (annotator.actions.ingest_leases)
        "leases": {},
    }
    result = {**(job.result or {}), "chunked": chunked}  # keeps the remux's entry, if any
    with transaction.atomic():
        Job.objects.filter(pk=job.pk).update(
            result=result,
            message=f"Encoding the proxy in {count} chunks ({probed.frame_count} frames, {probed.codec}).",
            updated_at=timezone.now(),
        )
        enqueue_each_on_commit(INGEST_CHUNK, [(video.pk, job.pk, i) for i in range(count)])
    job.result = result
    return True


class _ChunkProgress:
    """A chunk's own fraction in a small file; the job's progress is the mean of all."""

    def __init__(self, job: Job, workdir: Path, index: int, count: int):
        self.job, self.count = job, count
        self.dir = workdir / "progress"
        self.dir.mkdir(exist_ok=True)
        self.path = self.dir / f"{index:05d}"
        self._last = 0.0

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self._last < 0.5:
            return
        self._last = now
        self.path.write_text(f"{fraction:.4f}")
        total = 0.0
        for item in self.dir.iterdir():
            try:
                total += float(item.read_text() or 0)
            except (OSError, ValueError):
                continue  # another chunk is writing its file right now
        value = round(P_PROBED + (P_PROXY - P_PROBED) * min(1.0, total / self.count), 4)
        # Only forward: chunks report concurrently and may race.
        Job.objects.filter(pk=self.job.pk, progress__lt=value, status=Job.Status.RUNNING).update(
            progress=value, updated_at=timezone.now()
        )


def do_encode_chunk(video: Video, job: Job, index: int) -> None:
    """Encode one chunk; the task finishing the last chunk queues the join."""
    if job.status != Job.Status.RUNNING or "chunked" not in job.result:
        return  # the ingest failed or finished meanwhile (a late or redelivered task)
    workdir = _workdir(job)
    count = job.result["chunked"]["chunks"]
    owner = new_owner()
    if index in job.result["chunked"]["done"] or not take_lease(job, str(index), owner):
        return  # done already, or another live worker holds this chunk's lease
    keeper = LeaseKeeper(job, str(index), owner, _ChunkProgress(job, workdir, index, count))
    try:
        encode_chunk(workdir, index, progress=keeper)
    except Exception:
        if Job.objects.filter(pk=job.pk, status=Job.Status.FAILED).exists():
            return  # another chunk failed first and removed the working directory
        with clean_failure(video, job):
            shutil.rmtree(workdir, ignore_errors=True)
            raise
    with clean_failure(video, job):
        with transaction.atomic():
            row = Job.objects.select_for_update().get(pk=job.pk)
            if row.status != Job.Status.RUNNING:
                return
            chunked = row.result["chunked"]
            chunked["done"] = sorted(set(chunked["done"]) | {index})
            chunked.get("leases", {}).pop(str(index), None)
            finished = len(chunked["done"]) == count and not chunked["join_queued"]
            if finished:
                chunked["join_queued"] = True
                chunked["join_queued_at"] = time.time()
                enqueue_on_commit(INGEST_JOIN, video.pk, job.pk)
            done = len(chunked["done"])
            Job.objects.filter(pk=job.pk).update(
                result=row.result,
                progress=max(row.progress, round(P_PROBED + (P_PROXY - P_PROBED) * done / count, 4)),
                message=f"Encoded {done} of {count} proxy chunks.",
                updated_at=timezone.now(),
            )


def do_join_chunks(video: Video, job: Job) -> Video:
    """Join the encoded chunks into the proxy and finish the ingest like a single pass."""
    if job.status != Job.Status.RUNNING or "chunked" not in job.result:
        return video
    owner = new_owner()
    if not take_lease(job, JOIN, owner):
        return video  # finished, failed, or another live worker is joining
    workdir = _workdir(job)
    progress = LeaseKeeper(job, JOIN, owner, Progress(job))
    # A private directory: a duplicate join (this one's lease handed on after a stall)
    # never writes into the same files.
    joindir = workdir / f"join-{owner.rsplit(':', 1)[-1]}"
    superseded = False
    try:
        with clean_failure(video, job) as placed:
            missing = missing_chunks(workdir)
            if missing:
                # An earlier join consumed them and lost its lease before it finished:
                # they are encoded again, and the last of them queues the join again.
                superseded = True
                requeue_consumed_chunks(job, owner, missing)
                return video
            progress(P_PROXY, "Joining the proxy chunks.", force=True)
            state = ChunkState.load(workdir)
            joindir.mkdir()

            def consumed(index: int) -> None:
                # Deleted as soon as the join holds its packets, while this join still owns
                # the lease (a join that lost it leaves the chunks to the new owner).
                if holds_lease(job, JOIN, owner):
                    chunk_path(workdir, index).unlink(missing_ok=True)

            table = join_chunks(workdir, joindir / "proxy.mp4", progress=lambda f: progress(P_PROXY), consumed=consumed)
            probed = probe(state.source)
            if probed.frame_count != len(state.kept) + len(state.dropped):
                raise MediaError("the source changed while its proxy was being encoded")
            report = dropped_report(probed.table, [tuple(d) for d in state.dropped], probed.timestamps, probed.repairs)
            derived = finish_derived(joindir, progress, job.result["chunked"]["sha256"], probed, table, report)
            derived["chunks"] = len(state.chunks)
            if not holds_lease(job, JOIN, owner):
                superseded = True  # another join holds the lease now; it finishes the ingest
                return video
            placed.update(place(derived["files"], video, f"{video.pk}-{derived['proxy_sha256'][:16]}"))
            commit_proxy(video, job, derived, placed)
    finally:
        shutil.rmtree(joindir if superseded else workdir, ignore_errors=True)
    return video
