"""Celery tasks of the media room: thin wrappers that load rows and call ``do_*``."""

from __future__ import annotations

from celery import shared_task

__all__ = ["ingest_chunk", "ingest_join", "ingest_video"]


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
    if job.status == Job.Status.RUNNING and "chunked" in job.result:
        return  # redelivered after its chunk tasks were queued: they carry the ingest on
    do_ingest_video(video, job)


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
