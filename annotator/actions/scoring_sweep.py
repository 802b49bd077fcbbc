"""The scoring sweep: every dispatched scoring run ends ``done`` or ``failed``.

Celery beat runs ``annotator.scoring_sweep`` every ``FRAMELEDGER_SCORING_SWEEP_SECONDS``;
it calls :func:`do_sweep_scoring_runs`, which looks at every batch not yet done
(``annotator.actions.scoring_leases`` explains the leases) and sends again:

* a batch whose lease ran out: the worker that held it was killed, lost its machine, or
  stalled for a whole lease period;
* a batch that no task took since it was last sent, sent a lease period ago or more,
  while no scoring batch anywhere was taken, renewed or finished for a lease period: its
  message is gone (the broker restarted without its data, or the task failed before it
  took the lease), not merely waiting in the queue behind busy workers.

Each send counts as an attempt (the first is the run's own). A batch lost after
``FRAMELEDGER_SCORING_MAX_ATTEMPTS`` attempts ends its run: the scores still pending become
``error`` with the reason, the run is finished and sealed like any other, and its job ends
``failed`` with the reason in its message, so no run stays ``running`` for ever.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotator.actions.grading import seal_scores
from annotator.actions.scoring_leases import SWEEP_OWNER, lease_seconds
from annotator.base.queue import SCORE_BATCH, enqueue_on_commit
from annotator.base.seals import row_seal
from annotator.models import Job, ScoringBatch, ScoringRun, SubmissionScore
from annotator.models.audit_log import record
from annotator.reads import grading as reads

logger = logging.getLogger(__name__)


def max_attempts() -> int:
    return max(1, int(settings.FRAMELEDGER_SCORING_MAX_ATTEMPTS))


def _last_sign_of_life(now: datetime) -> datetime | None:
    """When any scoring task last took, renewed or finished a batch lease (among the open
    batches and those done within a lease period: the index on ``done_at`` finds them)."""
    recent = Q(done_at__isnull=True) | Q(done_at__gte=now - timedelta(seconds=lease_seconds()))
    moments = ScoringBatch.objects.filter(recent).aggregate(renewed=Max("renewed_at"), done=Max("done_at"))
    present = [m for m in moments.values() if m is not None]
    return max(present) if present else None


def _why_lost(batch: ScoringBatch, now: datetime, idle: bool) -> str | None:
    period = timedelta(seconds=lease_seconds())
    if batch.lease_expires is not None and batch.lease_owner != SWEEP_OWNER:
        if batch.lease_expires <= now:
            return f"its worker ({batch.lease_owner}) stopped renewing its lease"
        return None
    if idle and batch.queued_at <= now - period:
        return "no worker took its message"
    return None


def do_sweep_scoring_runs(now: datetime | None = None) -> dict:
    """Send again the batches lost since they were sent, fail the runs whose batch is lost
    for the last time; returns ``{"requeued": [batch ids], "failed": [run ids]}``."""
    now = timezone.now() if now is None else now
    last = _last_sign_of_life(now)
    idle = last is None or last <= now - timedelta(seconds=lease_seconds())
    report: dict = {"requeued": [], "failed": []}
    for batch in ScoringBatch.objects.filter(done_at__isnull=True).order_by("run_id", "index"):
        why = _why_lost(batch, now, idle)
        if why is None or batch.run_id in report["failed"]:
            continue
        if batch.attempts >= max_attempts():
            reason = (
                f"scoring failed: batch {batch.index + 1} was lost {batch.attempts} times "
                f"(the last time {why}); the submissions it held were not scored"
            )
            if do_fail_scoring_run(batch.run_id, reason):
                report["failed"].append(batch.run_id)
            continue
        with transaction.atomic():
            sent = ScoringBatch.objects.filter(
                pk=batch.pk, attempts=batch.attempts, done_at__isnull=True, lease_expires=batch.lease_expires
            ).update(attempts=batch.attempts + 1, queued_at=now, lease_owner=SWEEP_OWNER, lease_expires=None)
            if sent:
                logger.warning(
                    "scoring run %s: batch %s sent again (attempt %s): %s",
                    batch.run_id, batch.index, batch.attempts + 1, why,
                )  # fmt: skip
                enqueue_on_commit(SCORE_BATCH, batch.run_id, batch.result_ids, batch.pk)
                report["requeued"].append(batch.pk)
    return report


def do_fail_scoring_run(run_id: int, reason: str) -> bool:
    """End a run ``failed``: its pending scores become ``error`` with ``reason``, the run
    is finished and sealed, every batch done, its job ``failed``. False when the run had
    already ended."""
    now = timezone.now()
    with transaction.atomic():
        run = ScoringRun.objects.select_for_update().select_related("version__packet").filter(pk=run_id).first()
        if run is None or run.finished_at is not None:
            return False
        pending = list(
            SubmissionScore.objects.filter(run=run, status=SubmissionScore.Status.PENDING).values_list("pk", flat=True)
        )
        SubmissionScore.objects.filter(pk__in=pending, status=SubmissionScore.Status.PENDING).update(
            status=SubmissionScore.Status.ERROR, error=reason, scored_at=now
        )
        seal_scores(run, pending)
        ScoringRun.objects.filter(pk=run.pk).update(finished_at=now)
        run.finished_at = now
        ScoringBatch.objects.filter(run=run, done_at__isnull=True).update(done_at=now, lease_expires=None)
        counts = reads.run_counts(run)
        Job.objects.filter(pk=run.job_id).update(
            status=Job.Status.FAILED, message=reason, result={"total": run.total, **counts, "reason": reason},
            updated_at=now,
        )  # fmt: skip
        record(
            None,
            "finish_scoring_run",
            run,
            packet=run.version.packet,
            hashes={"ground_truth": run.ground_truth_sha256, "row": row_seal(run)},
            details={"scorer_id": run.scorer_id, "version": run.version_id, **counts, "failed": reason},
        )
    logger.error("scoring run %s failed: %s", run_id, reason)
    return True
