"""The work a freeze or a publication leaves for after its commit.

A freeze stores the ledger's hash, its state and its audit entry; a publication stores the
version and its audit entry. What is derived from them, the agreement report of the two
frozen ledgers and the calibration anchors of a new version, is computed by a Celery task
once the transaction has committed, so the freeze or the publication neither waits for the
scorers nor can be undone or blocked by them:

* ``queue_agreement_report`` and ``queue_version_calibration`` run inside the freeze or the
  publication. Each creates a ``Job`` row (``queued``; its ``packet`` and ``version`` say
  what it is about) and sends its task by name after commit: ``annotator.agreement_report``,
  ``annotator.version_calibration``.
* ``do_agreement_job`` and ``do_calibration_job`` run in the worker: the job goes
  ``running``, then ``done`` (its ``result`` names the stored row) or ``failed`` with the
  reason in its ``message`` (and the traceback in the log).
* Both are idempotent. The report is kept per packet, ledger hashes, adjudicated version and
  scorer code (``do_agreement_report`` returns the one stored), the anchors per version and
  scorer (``update_or_create``): a redelivered or repeated task stores nothing twice.
* A task that cannot be sent at all (the broker is down) fails its job with the reason; the
  freeze or the publication has committed by then and stands.

Where the results are read, ``annotator.reads.grading`` (``agreement_job``,
``calibration_job``) says whether they are still pending.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from annotator.actions.grading import do_agreement_report, do_compute_calibration
from annotator.base import queue
from annotator.models import AgreementReport, GroundTruthVersion, Job, Packet, VersionCalibration
from annotator.reads import grading as reads
from annotator.reads.integrity import TamperedData, audit_integrity_failure

logger = logging.getLogger(__name__)

AGREEMENT_JOB_KIND = reads.AGREEMENT_JOB_KIND
CALIBRATION_JOB_KIND = reads.CALIBRATION_JOB_KIND
DATABASE_ERRORS = (OperationalError, InterfaceError)
QUEUED_MESSAGE = "queued: computed once the {what} has committed"


# ---------------------------------------------------------------- inside the write


def queue_agreement_report(packet: Packet, *, actor, after: str) -> Job | None:
    """Inside a freeze or an adjudicated publication (``after`` says which): once both
    ledgers are frozen, a job for the agreement report, its task sent after commit. None
    when there is nothing to compute (a ledger still open, or the report for these ledgers
    and this version already stored)."""
    ledgers = reads.frozen_ledgers(packet)
    if ledgers is None or reads.stored_agreement(packet, ledgers) is not None:
        return None
    version = reads.latest_adjudicated(packet)
    job = Job.objects.create(
        kind=AGREEMENT_JOB_KIND,
        packet=packet,
        version=version,
        created_by=actor,
        message=QUEUED_MESSAGE.format(what=after),
        result={"ledger_a_sha256": ledgers["A"].sha256, "ledger_b_sha256": ledgers["B"].sha256},
    )
    _send_after_commit(job, queue.AGREEMENT_REPORT)
    return job


def queue_version_calibration(version: GroundTruthVersion, *, actor) -> Job:
    """Inside a publication: a job for the new version's anchors under its task scorer,
    its task sent after commit."""
    job = Job.objects.create(
        kind=CALIBRATION_JOB_KIND,
        packet_id=version.packet_id,
        version=version,
        created_by=actor,
        message=QUEUED_MESSAGE.format(what="publication"),
        result={"scorer_id": version.packet.task_kind.scorer_id},
    )
    _send_after_commit(job, queue.VERSION_CALIBRATION)
    return job


def _send_after_commit(job: Job, task_name: str) -> None:
    job_id = job.pk

    def send() -> None:
        try:
            queue.send(task_name, (job_id,))
        except Exception as error:  # the write has committed: it stands, the job says why nothing runs
            logger.exception("job %s (%s) could not be queued", job_id, task_name)
            _finish(job_id, Job.Status.FAILED, f"the task could not be queued: {_reason(error)}")

    transaction.on_commit(send)


# ------------------------------------------------------------------ in the worker


def do_agreement_job(job_id: int) -> AgreementReport | None:
    """Compute and store the agreement report of the job's packet (the task
    ``annotator.agreement_report``). A failure ends the job ``failed``; a database error
    is raised, for the task to wait out."""
    job = Job.objects.select_related("packet__task_kind").filter(pk=job_id, kind=AGREEMENT_JOB_KIND).first()
    if job is None or job.packet is None:
        return None
    _start(job, "computing the agreement report")
    try:
        report = do_agreement_report(job.packet, actor=None)
    except DATABASE_ERRORS:
        raise  # waited out by the task (annotator.entry.task_retry), then swept
    except Exception as error:
        _fail(job, error, f"agreement report of packet {job.packet_id}")
        return None
    _finish(job.pk, Job.Status.DONE, "agreement report stored", {"report": report.pk})
    return report


def do_calibration_job(job_id: int) -> VersionCalibration | None:
    """Compute and store the anchors of the job's version under its task scorer (the task
    ``annotator.version_calibration``). A failure (but a database error, raised for the
    task to wait out) ends the job ``failed``
    and leaves the version unready; a ground truth the scorer cannot read is a blocked
    calibration (``do_compute_calibration``), which is a result, not a failure."""
    job = Job.objects.select_related("version__packet__task_kind").filter(pk=job_id, kind=CALIBRATION_JOB_KIND).first()
    if job is None or job.version is None:
        return None
    _start(job, "computing the calibration anchors")
    try:
        with transaction.atomic():
            calibration = do_compute_calibration(job.version)
    except DATABASE_ERRORS:
        raise  # waited out by the task (annotator.entry.task_retry), then swept
    except Exception as error:
        _fail(job, error, f"calibration anchors of version {job.version_id}")
        return None
    _finish(
        job.pk,
        Job.Status.DONE,
        f"anchors computed under {calibration.scorer_id}: {calibration.status}",
        {"calibration": calibration.pk, "status": calibration.status},
    )
    return calibration


def _start(job: Job, message: str) -> None:
    # A repeated task (redelivered after success) leaves a finished job as it is.
    Job.objects.filter(pk=job.pk).exclude(status=Job.Status.DONE).update(
        status=Job.Status.RUNNING, message=message, updated_at=timezone.now()
    )


def _fail(job: Job, error: Exception, what: str) -> None:
    logger.exception("%s failed (job %s)", what, job.pk)
    if isinstance(error, TamperedData):  # its transaction rolled back: record it now
        audit_integrity_failure(error)
    _finish(job.pk, Job.Status.FAILED, f"{what} could not be computed: {_reason(error)}")


def _finish(job_id: int, state: str, message: str, result: dict | None = None) -> None:
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        return
    job.status = state
    job.message = message
    job.result = {**job.result, **(result or {})}
    if state == Job.Status.DONE:
        job.progress = 1.0
    job.save(update_fields=["status", "message", "result", "progress", "updated_at"])


def _reason(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
