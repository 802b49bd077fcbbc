"""The sweep of the work a freeze or a publication leaves for after its commit.

An agreement report or a calibration job (``annotator.actions.derived``) is one short task
keyed by its job, idempotent (each says why). Celery beat runs ``annotator.derived_sweep``
every ``FRAMELEDGER_SCORING_SWEEP_SECONDS``: a job still ``queued`` or ``running`` whose row
has not changed for ``FRAMELEDGER_DERIVED_STALE_SECONDS`` (its worker was killed, its message
was lost with the broker's data, or a database outage outlasted the task's retries) has its
task sent again. It is sent at most ``FRAMELEDGER_DERIVED_MAX_ATTEMPTS`` times in all (the
first is its own); found stale once more, the job ends ``failed`` with the reason.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.base import queue
from annotator.models import Job
from annotator.reads.grading import AGREEMENT_JOB_KIND, CALIBRATION_JOB_KIND

logger = logging.getLogger(__name__)

TASKS = {AGREEMENT_JOB_KIND: queue.AGREEMENT_REPORT, CALIBRATION_JOB_KIND: queue.VERSION_CALIBRATION}
OPEN = (Job.Status.QUEUED, Job.Status.RUNNING)


def do_sweep_derived_jobs(now: datetime | None = None) -> dict:
    """Send again the stale derived jobs, fail those sent too often; returns
    ``{"requeued": [job ids], "failed": [job ids]}``."""
    now = timezone.now() if now is None else now
    stale = now - timedelta(seconds=settings.FRAMELEDGER_DERIVED_STALE_SECONDS)
    limit = max(1, int(settings.FRAMELEDGER_DERIVED_MAX_ATTEMPTS))
    report: dict = {"requeued": [], "failed": []}
    for job in Job.objects.filter(kind__in=list(TASKS), status__in=OPEN, updated_at__lte=stale).order_by("pk"):
        sends = int((job.result or {}).get("sends", 0))
        same = Job.objects.filter(pk=job.pk, status__in=OPEN, updated_at=job.updated_at)
        if 1 + sends >= limit:
            reason = (
                f"the {job.kind} job was lost {limit} times (its worker was killed or its message was lost) "
                "and was not computed"
            )
            if same.update(status=Job.Status.FAILED, message=reason, updated_at=now):
                logger.error("job %s failed: %s", job.pk, reason)
                report["failed"].append(job.pk)
            continue
        with transaction.atomic():
            result = {**(job.result or {}), "sends": sends + 1}
            if same.update(result=result, message=f"sent again (attempt {sends + 2})", updated_at=now):
                queue.enqueue_on_commit(TASKS[job.kind], job.pk)
                report["requeued"].append(job.pk)
    return report
