"""Ingests outside the chunk leases: a lost task is sent again, a hopeless one fails.

Chunks and joins have leases (``annotator.actions.ingest_leases``). The other steps of an
ingest are one task each: ``annotator.ingest_video`` (hash, probe, the remux or a one-pass
proxy) and ``annotator.ingest_proxy`` (the proxy after the remux, until it plans its
chunks). Their progress callbacks bring the job row's ``updated_at`` forward at least every
few seconds while they work, so the row itself is their lease. The ingest sweep
(:func:`do_sweep_stale_ingests`) sends again:

* a ``running`` ingest job not chunked whose row has not changed for two chunk lease periods
  (``2 × FRAMELEDGER_INGEST_LEASE_SECONDS``): its worker was killed or lost its machine;
* a ``queued`` one as old, or one ready on its remux whose proxy has not moved for as long,
  when no ingest job at all has moved for as long: its message was lost (the broker
  restarted without its data) or its worker vanished, not merely waiting behind busy workers.

It sends ``annotator.ingest_proxy`` when the video is already annotatable on its remux, else
``annotator.ingest_video`` (both start their step again from the stored source, in a fresh
working directory). Each job is sent at most ``FRAMELEDGER_INGEST_MAX_ATTEMPTS`` times in all
(the first is the upload's own; ``result["sends"]`` counts the others); found stale once
more, it ends ``failed`` with the reason (``fail_ingest``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from annotator.actions.ingest_leases import lease_seconds, max_attempts
from annotator.actions.ingest_steps import fail_ingest
from annotator.base.queue import INGEST_PROXY, INGEST_VIDEO, enqueue_on_commit
from annotator.models import Job

INGEST_JOB_KIND = "ingest"
OPEN = (Job.Status.QUEUED, Job.Status.RUNNING)


def do_sweep_stale_ingests(now: datetime | None = None) -> dict:
    """Send again the stale ingests outside chunk leases; returns ``{"requeued": [job ids],
    "failed": [job ids]}``."""
    now = timezone.now() if now is None else now
    stale = now - timedelta(seconds=2 * lease_seconds())
    idle = not Job.objects.filter(kind=INGEST_JOB_KIND, updated_at__gt=stale).exists()
    report: dict = {"requeued": [], "failed": []}
    candidates = (
        Job.objects.filter(kind=INGEST_JOB_KIND, status__in=OPEN, updated_at__lte=stale, video__isnull=False)
        .exclude(result__has_key="chunked")
        .select_related("video")
        .order_by("pk")
    )
    for job in candidates:
        result = job.result or {}
        if (job.status == Job.Status.QUEUED or "remux" in result) and not idle:
            continue  # its message may be waiting behind other ingests' work
        sends = int(result.get("sends", 0))
        same = Job.objects.filter(pk=job.pk, status=job.status, updated_at=job.updated_at)
        if 1 + sends >= max_attempts():
            if same.exists():
                reason = (
                    f"Ingest failed: it was lost {max_attempts()} times (its worker was killed or stalled, or its "
                    "message was lost); upload the video again or ask an operator to check the workers."
                )
                fail_ingest(job.video, job, reason)
                report["failed"].append(job.pk)
            continue
        with transaction.atomic():
            if same.update(result={**result, "sends": sends + 1}, updated_at=now):
                task = INGEST_PROXY if "remux" in result else INGEST_VIDEO
                enqueue_on_commit(task, job.video_id, job.pk)
                report["requeued"].append(job.pk)
    return report
