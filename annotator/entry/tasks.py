"""Every Celery task of FrameLedger, one thin wrapper each that loads rows and calls a
``do_*`` operation.

Write operations never import this module: they enqueue a task by its name through
``annotator.base.queue`` after their transaction commits, so the write layer and the task
layer do not import each other.

* ``annotator.ingest_video``: ingest one uploaded video; progress and outcome are written
  to the ``Job`` row. A long source is encoded in chunks by ``annotator.ingest_chunk``
  tasks and finished by one ``annotator.ingest_join`` (``annotator.actions.ingest_chunks``);
  ``annotator.ingest_sweep`` (Celery beat) queues again what a killed worker held
  (``annotator.actions.ingest_leases``).
* ``annotator.ingest_full``: the full-height rendition, on demand.
* ``annotator.score_batch``: a scoring run is sent as a Celery group of these (one per chunk
  of submissions). Each task scores its chunk and writes the run's progress to the ``Job``
  row, so any web process can relay it whatever the channel layer; the task that sees
  nothing pending finishes the run. A redelivered task (acks_late) skips the scores
  already final.
  Each batch holds a lease in its ``ScoringBatch`` row; ``annotator.scoring_sweep`` (Celery
  beat) sends again a batch whose worker vanished or whose message was lost, and ends the
  run ``failed`` after ``FRAMELEDGER_SCORING_MAX_ATTEMPTS`` (``annotator.actions.scoring_sweep``).
* ``annotator.run_bundle``: run one executable moment-search bundle in the sandbox, on
  the bundle queue.
* ``annotator.bundle_sweep`` (Celery beat, every ``FRAMELEDGER_BUNDLE_SWEEP_SECONDS``): end
  the bundle runs whose worker died (no heartbeat for ``FRAMELEDGER_BUNDLE_LEASE_SECONDS``).
* ``annotator.build_search_index``: build a video's moment-search index; on the queue
  ``FRAMELEDGER_RETRIEVAL_QUEUE`` when set, else the default one.
* ``annotator.agreement_report`` and ``annotator.version_calibration``: the work a freeze or
  a publication leaves for after its commit (``annotator.actions.derived``): the agreement
  report of the two frozen ledgers, the calibration anchors of a new version. Each has a
  ``Job`` row that ends ``done`` or ``failed`` with the reason; both are idempotent, so a
  redelivered message stores nothing twice. ``annotator.derived_sweep`` (Celery beat) sends
  again such a job left queued or running, and fails it after a few tries.
"""

from __future__ import annotations

from celery import shared_task

from annotator.base.queue import (
    AGREEMENT_REPORT,
    BUILD_SEARCH_INDEX,
    BUNDLE_SWEEP,
    DERIVED_SWEEP,
    INGEST_CHUNK,
    INGEST_FULL,
    INGEST_JOIN,
    INGEST_PROXY,
    INGEST_SWEEP,
    INGEST_VIDEO,
    RECOMPUTE_CALIBRATION,
    RUN_BUNDLE,
    SCORE_BATCH,
    SCORING_SWEEP,
    VERSION_CALIBRATION,
)
from annotator.entry.task_retry import with_database_retries

__all__ = [
    "agreement_report",
    "build_search_index",
    "derived_sweep",
    "bundle_sweep",
    "ingest_chunk",
    "ingest_full",
    "ingest_join",
    "ingest_proxy",
    "ingest_sweep",
    "ingest_video",
    "recompute_calibration",
    "run_bundle",
    "score_batch",
    "scoring_sweep",
    "version_calibration",
]


@shared_task(name=INGEST_VIDEO, acks_late=True, reject_on_worker_lost=True)
def ingest_video(video_id: int, job_id: int) -> None:
    """Ingest one uploaded video; progress and outcome are written to the Job row."""
    from annotator.actions.ingest import do_ingest_video
    from annotator.models import Job, Video

    video = Video.objects.filter(pk=video_id).first()
    job = Job.objects.filter(pk=job_id, video=video).first() if video else None
    if job is None:  # the video was deleted while its ingest was queued
        return
    if job.status == Job.Status.DONE:  # a redelivered message (acks_late) after success
        return
    if job.status == Job.Status.RUNNING and ("chunked" in job.result or "remux" in job.result):
        return  # redelivered after its remux or chunk tasks were queued: they carry it on
    do_ingest_video(video, job)


@shared_task(name=INGEST_PROXY, acks_late=True, reject_on_worker_lost=True)
def ingest_proxy(video_id: int, job_id: int, chunk_frames: int | None = None) -> None:
    """Encode the proxy of a video already ready for annotation on its remux (chunked
    like any proxy). A killed worker's message is redelivered and the encode redone."""
    from annotator.actions.ingest import do_encode_proxy
    from annotator.models import Job

    job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
    if job is None or job.status != Job.Status.RUNNING or "chunked" in job.result:
        return  # deleted, finished, failed, or its chunk tasks carry it on
    do_encode_proxy(job.video, job, chunk_frames=chunk_frames)


@shared_task(name=INGEST_CHUNK, acks_late=True, reject_on_worker_lost=True)
def ingest_chunk(video_id: int, job_id: int, index: int) -> None:
    """Encode one proxy chunk. A killed worker's message is redelivered (acks late,
    rejected on worker loss) and the chunk encoded again: its output is idempotent."""
    from annotator.actions.ingest_chunks import do_encode_chunk
    from annotator.models import Job

    def body() -> None:
        job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
        if job is not None:
            do_encode_chunk(job.video, job, index)

    with_database_retries(body, what=f"ingest job {job_id} chunk {index}")


@shared_task(name=INGEST_JOIN, acks_late=True, reject_on_worker_lost=True)
def ingest_join(video_id: int, job_id: int) -> None:
    """Join the encoded chunks into the proxy and finish the ingest."""
    from annotator.actions.ingest_chunks import do_join_chunks
    from annotator.models import Job

    def body() -> None:
        job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
        if job is not None:
            do_join_chunks(job.video, job)

    with_database_retries(body, what=f"ingest job {job_id} join")


@shared_task(name=INGEST_FULL, acks_late=True, reject_on_worker_lost=True)
def ingest_full(video_id: int, job_id: int) -> None:
    """Encode the full-height rendition a packet participant asked for (the ladder's
    on-demand rung, ``annotator.actions.full_rung``). A killed worker's message is
    redelivered and the encode redone in a fresh working directory."""
    from annotator.actions.full_rung import do_encode_full
    from annotator.models import Job

    job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
    if job is not None:
        do_encode_full(job.video, job)


@shared_task(name=INGEST_SWEEP)
def ingest_sweep() -> dict:
    """Periodic (Celery beat, every ``FRAMELEDGER_INGEST_SWEEP_SECONDS``): queue again the
    chunks and joins of running ingests whose lease expired (a killed worker's work) and the
    ingest steps left without progress (``annotator.actions.ingest_stale``), and
    drop the remuxes the proxy replaced (``annotator.actions.remux_retention``) and the
    resumable uploads left unfinished for a day (``annotator.actions.uploads``)."""
    from annotator.actions.ingest_leases import do_sweep_ingests
    from annotator.actions.remux_retention import do_drop_superseded_remuxes

    report = {str(k): v for k, v in do_sweep_ingests().items()}
    from annotator.actions.ingest_stale import do_sweep_stale_ingests

    stale = do_sweep_stale_ingests()
    if stale["requeued"] or stale["failed"]:
        report["stale"] = stale
    from annotator.actions.uploads import do_expire_uploads

    dropped = do_drop_superseded_remuxes()
    if dropped:
        report["remux_dropped"] = dropped
    expired = do_expire_uploads()
    if expired:
        report["uploads_expired"] = expired
    return report


@shared_task(name=SCORE_BATCH, acks_late=True, reject_on_worker_lost=True)
def score_batch(run_id: int, result_ids: list[int], batch_id: int | None = None) -> int:
    """Score a chunk of a run under its batch's lease. A redelivered or re-sent message
    scores only the results still pending, so no submission is scored twice; a database
    error is waited out (``annotator.entry.task_retry``), then the sweep sends it again."""
    from annotator.actions.grading import do_score_batch

    return with_database_retries(
        lambda: do_score_batch(run_id, result_ids, batch_id=batch_id), what=f"scoring run {run_id}"
    )


@shared_task(name=SCORING_SWEEP)
def scoring_sweep() -> dict:
    """Periodic (Celery beat, every ``FRAMELEDGER_SCORING_SWEEP_SECONDS``): send again the
    scoring batches whose worker vanished or whose message was lost, and end ``failed`` the
    runs whose batch was lost ``FRAMELEDGER_SCORING_MAX_ATTEMPTS`` times."""
    from annotator.actions.scoring_sweep import do_sweep_scoring_runs

    return do_sweep_scoring_runs()


@shared_task(name=RUN_BUNDLE)
def run_bundle(run_id: int) -> str:
    """Run one executable bundle in the sandbox (``annotator.actions.bundles``). Queued on
    ``FRAMELEDGER_BUNDLE_QUEUE`` (``FRAMELEDGER_BUNDLE_GPU_QUEUE`` for CUDA): start workers
    for it with ``celery -A deploy worker -Q frameledger-bundles`` (``-Q gpu`` on a CUDA
    machine), as root with bubblewrap installed: otherwise the run ends refused."""
    from annotator.actions.bundles import do_run_bundle

    return do_run_bundle(run_id).status


@shared_task(name=BUNDLE_SWEEP)
def bundle_sweep() -> list[int]:
    """Periodic (Celery beat): end the bundle runs whose worker stopped renewing its
    heartbeat, so that no run stays ``running`` forever."""
    from annotator.actions.bundles import do_sweep_bundle_runs

    return do_sweep_bundle_runs()


@shared_task(name=BUILD_SEARCH_INDEX, acks_late=True, reject_on_worker_lost=True)
def build_search_index(video_id: int) -> None:
    """Build a video's moment-search index; the outcome is written to its row."""
    from annotator.actions.search import do_build_search_index

    do_build_search_index(video_id)


@shared_task(name=RECOMPUTE_CALIBRATION, acks_late=True, reject_on_worker_lost=True)
def recompute_calibration(version_ids: list[int]) -> int:
    """Compute the calibration anchors of these versions again (queued after CLIP features
    arrive for their video: the zero-shot anchor needs them). A failure is logged and
    leaves that version's earlier anchors as they were; returns how many were computed."""
    from annotator.actions.grading import recompute_calibration as recompute
    from annotator.models import GroundTruthVersion

    done = 0
    for version in GroundTruthVersion.objects.filter(pk__in=version_ids).order_by("pk"):
        done += recompute(version) is not None
    return done


@shared_task(name=AGREEMENT_REPORT, acks_late=True, reject_on_worker_lost=True)
def agreement_report(job_id: int) -> str | None:
    """Store the agreement report a freeze or an adjudicated publication queued; returns
    the job's final status."""
    from annotator.actions.derived import do_agreement_job
    from annotator.models import Job

    with_database_retries(lambda: do_agreement_job(job_id), what=f"agreement job {job_id}")
    return Job.objects.filter(pk=job_id).values_list("status", flat=True).first()


@shared_task(name=VERSION_CALIBRATION, acks_late=True, reject_on_worker_lost=True)
def version_calibration(job_id: int) -> str | None:
    """Compute the calibration anchors a publication queued; returns the job's final status."""
    from annotator.actions.derived import do_calibration_job
    from annotator.models import Job

    with_database_retries(lambda: do_calibration_job(job_id), what=f"calibration job {job_id}")
    return Job.objects.filter(pk=job_id).values_list("status", flat=True).first()


@shared_task(name=DERIVED_SWEEP)
def derived_sweep() -> dict:
    """Periodic (Celery beat): send again the agreement and calibration jobs left queued or
    running (``annotator.actions.derived_sweep``), failing those lost too often."""
    from annotator.actions.derived_sweep import do_sweep_derived_jobs

    return do_sweep_derived_jobs()
