"""Celery tasks of the media room: thin wrappers that load rows and call ``do_*``."""

from __future__ import annotations

from celery import shared_task

__all__ = ["ingest_video"]


@shared_task(name="annotator.ingest_video")
def ingest_video(video_id: int, job_id: int) -> None:
    """Ingest one uploaded video; progress and outcome are written to the Job row."""
    from annotator.actions.ingest import do_ingest_video
    from annotator.models import Job, Video

    video = Video.objects.get(pk=video_id)
    job = Job.objects.get(pk=job_id, video=video)
    if job.status == Job.Status.DONE:  # a redelivered message (acks_late) after success
        return
    do_ingest_video(video, job)
