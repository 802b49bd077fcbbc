"""Celery tasks of the media room: thin wrappers that load rows and call ``do_*``."""

from __future__ import annotations

from celery import shared_task

__all__ = ["ingest_chunk", "ingest_join", "ingest_proxy", "ingest_video"]


@shared_task(name="annotator.ingest_video")
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


@shared_task(name="annotator.ingest_proxy", acks_late=True, reject_on_worker_lost=True)
def ingest_proxy(video_id: int, job_id: int, chunk_frames: int | None = None) -> None:
    """Encode the proxy of a video already ready for annotation on its remux (chunked
    like any proxy). A killed worker's message is redelivered and the encode redone."""
    from annotator.actions.ingest import do_encode_proxy
    from annotator.models import Job

    job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
    if job is None or job.status != Job.Status.RUNNING or "chunked" in job.result:
        return  # deleted, finished, failed, or its chunk tasks carry it on
    do_encode_proxy(job.video, job, chunk_frames=chunk_frames)


@shared_task(name="annotator.ingest_chunk", acks_late=True, reject_on_worker_lost=True)
def ingest_chunk(video_id: int, job_id: int, index: int) -> None:
    """Encode one proxy chunk. A killed worker's message is redelivered (acks late,
    rejected on worker loss) and the chunk encoded again: its output is idempotent."""
    from annotator.actions.ingest_chunks import do_encode_chunk
    from annotator.models import Job

    job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
    if job is not None:
        do_encode_chunk(job.video, job, index)


@shared_task(name="annotator.ingest_join", acks_late=True, reject_on_worker_lost=True)
def ingest_join(video_id: int, job_id: int) -> None:
    """Join the encoded chunks into the proxy and finish the ingest."""
    from annotator.actions.ingest_chunks import do_join_chunks
    from annotator.models import Job

    job = Job.objects.filter(pk=job_id, video_id=video_id).select_related("video").first()
    if job is not None:
        do_join_chunks(job.video, job)
