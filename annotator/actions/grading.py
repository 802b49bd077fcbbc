"""Grading agent submissions: upload, scoring runs, calibration anchors, agreement.

Every write is one ``do_*`` function; REST views, the Celery tasks and the
``score_submissions`` command call them and do nothing else of substance.

* ``do_upload_submissions`` stores files byte for byte with their SHA-256.
* ``do_start_scoring_run`` pins a run to one ground-truth version and one scorer id,
  creates a pending score per submission and (after commit) sends the batch to
  Celery as a group of ``annotator.score_batch`` tasks, by name (``annotator.base.queue``).
* ``do_score_batch`` / ``do_score_submission`` run in the worker (or in-process for
  the command line): the scorer's output bytes are stored exactly as the verifier
  CLI writes them. A bad file scores 0 with the scorer's reason; a scorer failure is
  recorded on that one score; neither stops the run.
* ``do_compute_calibration`` runs the anchors of ``python -m scoring anchors``; the
  task ``annotator.version_calibration`` calls it after every publication commits
  (``annotator.actions.derived``). ``do_mark_version_ready`` refuses a
  version whose oracle is not 1.0 or whose empty anchor is not 0.0, and says why.
* ``do_agreement_report`` stores the comparison of the two frozen ledgers (and each
  with the latest adjudicated version); the task ``annotator.agreement_report`` calls it
  after the second freeze and after each adjudicated publication commits, so reading it
  never writes.

The reads (leaderboard, diagnostics, the agreement report as read) are in
``annotator.reads.grading``.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable, Sequence

from django.db import transaction
from django.utils import timezone

from annotator.actions.scoring_leases import BatchLeaseKeeper, finish_batch, new_owner, take_batch_lease
from annotator.base.canonical import sha256_hex
from annotator.base.errors import Conflict, InvalidInput
from annotator.base.families import adapter_for_scorer
from annotator.base.grading import calibration as calibration_rules
from annotator.base.grading.uploads import SubmissionFile
from annotator.base.planner import refresh_statistics
from annotator.base.queue import SCORE_BATCH, enqueue_group_on_commit
from annotator.base.seals import row_seal
from annotator.models import (
    AgreementReport,
    GroundTruthVersion,
    Job,
    Packet,
    ScoringBatch,
    ScoringRun,
    Submission,
    SubmissionScore,
    VersionCalibration,
    VersionReadiness,
)
from annotator.models.audit_log import record
from annotator.models.checked import check_row
from annotator.reads import grading as reads
from annotator.reads.grading_inputs import ScoringInputs, check_scorer_id, scorer_code_sha256, scoring_inputs
from annotator.reads.integrity import TamperedData
from annotator.reads.moment_corpus import reference_calibration_rows
from annotator.reads.sealed_derived import verified_calibration
from scoring import SolutionRejected, anchors, score_submission
from scoring.errors import ScoringError

logger = logging.getLogger(__name__)

SCORING_JOB_KIND = "scoring"
# A Celery task scores up to MAX_CHUNK submissions (a run of n is split into about 8
# tasks, so several workers share it); scores are committed COMMIT_EVERY at a time and
# the Job row is brought up to date at most every PROGRESS_SECONDS within a task.
MAX_CHUNK = 100
COMMIT_EVERY = 25
PROGRESS_SECONDS = 0.5


# ---------------------------------------------------------------------------- uploads


# A batch is inserted and recorded UPLOAD_CHUNK rows at a time: one INSERT and one
# ``upload_submissions`` audit entry per chunk (each entry holds the seals of its rows only,
# all with the batch's id; ``sealed_rows.batch_seals`` reads them together). Memory beyond
# the files themselves stays that of one chunk, whatever the batch's size.
UPLOAD_CHUNK = 250


@transaction.atomic
def do_upload_submissions(packet: Packet, files: Sequence[SubmissionFile], *, actor) -> list[Submission]:
    """Store a batch of submission files for a packet, as uploaded.

    Precondition: the caller has checked that ``actor`` is a maintainer and built
    ``files`` with the caps of the packet's scorer (``annotator.base.grading.uploads``).
    Returns the rows without their bytes (``content`` is deferred; ``kept`` says whether
    they were kept).
    """
    if not files:
        raise InvalidInput("no submission files were uploaded", field="files")
    batch = uuid.uuid4().hex
    created: list[Submission] = []
    for start in range(0, len(files), UPLOAD_CHUNK):
        created += _insert_chunk(packet, batch, files[start : start + UPLOAD_CHUNK], actor=actor)
    return created


def _insert_chunk(packet: Packet, batch: str, files: Sequence[SubmissionFile], *, actor) -> list[Submission]:
    """Insert one chunk of a batch and append its audit entry; the rows come back with
    their bytes let go (what the callers show needs only ``kept``)."""
    rows = [
        Submission(
            packet=packet,
            label=item.label,
            original_name=item.name,
            batch=batch,
            content=item.content,
            sha256=item.sha256,
            size_bytes=item.size,
            rejected_reason=item.rejected_reason,
            uploaded_by=actor,
        )
        for item in files
    ]
    for row in rows:  # bulk_create skips save(): the same rule (annotator.models.checked)
        check_row(row)
    created = Submission.objects.bulk_create(rows)
    if any(s.pk is None for s in created):  # backends without RETURNING on bulk insert
        created = list(Submission.objects.filter(batch=batch).order_by("-id").defer("content")[: len(rows)])[::-1]
    record(
        actor,
        "upload_submissions",
        created[0],
        packet=packet,
        hashes={"batch": batch, "submissions": {str(s.pk): row_seal(s) for s in created}},
        details={"count": len(created), "submissions": [[s.pk, s.label, s.sha256, s.size_bytes] for s in created]},
    )
    for row, item in zip(created, files, strict=True):
        row.kept = item.content is not None
        row.content = None  # the bytes are stored; the caller's list holds no copy of the batch
    return created


# ----------------------------------------------------------------------- scoring runs


def chunked(ids: Sequence[int], size: int | None = None) -> list[list[int]]:
    size = size or max(1, min(MAX_CHUNK, math.ceil(len(ids) / 8)))
    return [list(ids[k : k + size]) for k in range(0, len(ids), size)]


@transaction.atomic
def do_start_scoring_run(
    version: GroundTruthVersion,
    submissions: Sequence[Submission],
    *,
    actor,
    scorer_id: str | None = None,
    dispatch: bool = True,
    chunk_size: int | None = None,
) -> ScoringRun:
    """Pin a run to ``version`` and a scorer; queue every submission for scoring.

    With ``dispatch`` the batch goes to Celery after commit as a group of
    ``score_batch`` tasks; without, the caller runs ``do_score_batch`` itself.
    """
    scorer_id = check_scorer_id(version, scorer_id)
    submissions = list(submissions)
    if not submissions:
        raise InvalidInput("there are no submissions to score", field="submissions")
    foreign = [s.pk for s in submissions if s.packet_id != version.packet_id]
    if foreign:
        raise InvalidInput(f"submission {foreign[0]} belongs to another packet", field="submissions")
    try:
        inputs = scoring_inputs(version, scorer_id)
    except ValueError as error:
        raise InvalidInput(f"the ground truth cannot be scored with {scorer_id}: {error}", field="scorer_id") from None
    total = len(submissions)
    job = Job.objects.create(
        kind=SCORING_JOB_KIND, created_by=actor, message=f"0 of {total} scored", result={"total": total}
    )
    run = ScoringRun.objects.create(
        version=version,
        scorer_id=scorer_id,
        params=inputs.params,
        ground_truth_sha256=inputs.ground_truth_sha256,
        scorer_code_sha256=scorer_code_sha256(),
        job=job,
        total=len(submissions),
        created_by=actor,
    )
    results = SubmissionScore.objects.bulk_create(
        SubmissionScore(run=run, submission=s, version=version, scorer_id=scorer_id) for s in submissions
    )
    if any(r.pk is None for r in results):
        results = list(SubmissionScore.objects.filter(run=run).order_by("id"))
    record(
        actor,
        "start_scoring_run",
        run,
        packet=version.packet,
        hashes={"ground_truth": inputs.ground_truth_sha256, "version": version.sha256, "row": row_seal(run)},
        details={"scorer_id": scorer_id, "version": version.pk, "submissions": len(submissions)},
    )
    if dispatch:
        now = timezone.now()
        chunks = chunked([r.pk for r in results], chunk_size)
        batches = ScoringBatch.objects.bulk_create(
            ScoringBatch(run=run, index=i, result_ids=chunk, queued_at=now) for i, chunk in enumerate(chunks)
        )
        if any(b.pk is None for b in batches):
            batches = list(ScoringBatch.objects.filter(run=run).order_by("index"))
        enqueue_group_on_commit(SCORE_BATCH, [(run.pk, b.result_ids, b.pk) for b in batches])
    return run


def run_chunks(run: ScoringRun, chunk_size: int | None = None) -> list[list[int]]:
    """The pending scores of a run in batches (for callers that score in-process)."""
    ids = list(run.results.filter(status=SubmissionScore.Status.PENDING).order_by("id").values_list("pk", flat=True))
    return chunked(ids, chunk_size)


def do_score_submission(result: SubmissionScore, inputs: ScoringInputs) -> bool:
    """Score one pending submission and store the scorer's bytes; False if it was
    already final (a redelivered task). Never raises for a bad submission."""
    submission = result.submission
    if submission.content is not None and sha256_hex(bytes(submission.content)) != submission.sha256:
        logger.critical("submission %s: its bytes do not match its SHA-256; not scored", submission.pk)
        return bool(
            SubmissionScore.objects.filter(pk=result.pk, status=SubmissionScore.Status.PENDING).update(
                status=SubmissionScore.Status.ERROR,
                scored_at=timezone.now(),
                error=f"integrity error: submission {submission.pk}: its bytes do not match its SHA-256",
            )  # fmt: skip
        )
    if submission.content is not None:
        solution: bytes | BaseException = bytes(submission.content)
    else:
        solution = SolutionRejected(submission.rejected_reason or "the submission was not kept")
    started = time.perf_counter()
    fields: dict = {"scored_at": timezone.now()}
    try:
        outcome = score_submission(inputs.scorer_id, inputs.ground_truth, solution, **inputs.params)
    except Exception as error:  # the scorer itself failed: record it on this score only
        logger.exception("scorer %s failed on submission %s", inputs.scorer_id, submission.pk)
        fields.update(status=SubmissionScore.Status.ERROR, error=f"{type(error).__name__}: {error}")
    else:
        fields.update(
            status=SubmissionScore.Status.SCORED,
            reward=outcome.reward,
            reason=outcome.reason,
            details=outcome.details,
            reward_json=outcome.reward_json,
            reward_txt=outcome.reward_txt,
            details_json=outcome.details_json,
        )
    fields["scorer_seconds"] = time.perf_counter() - started
    return bool(SubmissionScore.objects.filter(pk=result.pk, status=SubmissionScore.Status.PENDING).update(**fields))


def do_score_batch(
    run_id: int,
    result_ids: Sequence[int],
    *,
    progress: Callable[[int], None] | None = None,
    batch_id: int | None = None,
) -> int:
    """Score the given pending results of a run, then record progress on its Job
    (and finish the run when nothing is pending). Returns how many were scored now.

    With ``batch_id`` (a dispatched run) the task holds the batch's lease while it scores
    (``annotator.actions.scoring_leases``) and does nothing when another live task holds it
    or the batch is done."""
    owner = new_owner()
    if batch_id is not None and not take_batch_lease(batch_id, owner):
        return 0
    keeper = BatchLeaseKeeper(batch_id, owner) if batch_id is not None else None
    run = ScoringRun.objects.select_related("version__packet__task_kind", "version__packet__video", "job").get(
        pk=run_id
    )
    Job.objects.filter(pk=run.job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING, updated_at=timezone.now()
    )
    pending = list(
        SubmissionScore.objects.filter(run=run, pk__in=list(result_ids), status=SubmissionScore.Status.PENDING)
        .select_related("submission")
        .order_by("id")
    )
    done = 0
    inputs, why = _pinned_inputs(run) if pending else (None, "")
    reported = time.monotonic()
    for start in range(0, len(pending), COMMIT_EVERY):
        with transaction.atomic():
            written = []
            for result in pending[start : start + COMMIT_EVERY]:
                if inputs is None:
                    wrote = _fail(result, why)
                else:
                    wrote = do_score_submission(result, inputs)
                    done += wrote
                if wrote:
                    written.append(result.pk)
                if progress is not None:
                    progress(1)
                if keeper is not None:
                    keeper()
            seal_scores(run, written)
        if time.monotonic() - reported >= PROGRESS_SECONDS:
            update_progress(run)
            reported = time.monotonic()
    update_progress(run)
    if batch_id is not None:
        finish_batch(batch_id, owner)
    return done


def _pinned_inputs(run: ScoringRun) -> tuple[ScoringInputs | None, str]:
    """The run's inputs, or None and why its results cannot be scored."""
    try:
        inputs = scoring_inputs(run.version, run.scorer_id)
    except TamperedData as error:  # logged and audited where it was found
        return None, error.message
    if inputs.ground_truth_sha256 != run.ground_truth_sha256 or inputs.params != run.params:
        logger.error("run %s: ground truth or parameters differ from the pinned ones", run.pk)
        return None, "the version's ground truth no longer exports to the pinned bytes"
    return inputs, ""


def _fail(result: SubmissionScore, message: str) -> bool:
    return bool(
        SubmissionScore.objects.filter(pk=result.pk, status=SubmissionScore.Status.PENDING).update(
            status=SubmissionScore.Status.ERROR, error=message, scored_at=timezone.now()
        )
    )


def seal_scores(run: ScoringRun, score_ids: Sequence[int]) -> None:
    """Record the seals of the scores just written (one audit entry per committed batch,
    appended last in its transaction: the chain lock is held only for the commit)."""
    if not score_ids:
        return
    scores = SubmissionScore.objects.filter(pk__in=list(score_ids)).order_by("id")
    record(
        None,
        "score_results",
        run,
        packet=run.version.packet,
        hashes={"scores": {str(s.pk): row_seal(s) for s in scores}},
        details={"scores": len(score_ids)},
    )


FINAL = (Job.Status.DONE, Job.Status.FAILED)
BULK_ROWS = 500  # a run of this many scores or more refreshes the planner's statistics


def update_progress(run: ScoringRun) -> None:
    """Write the run's progress to its Job; the first caller to see it complete
    finishes it. Progress never moves backwards (batches finish in any order), and a run
    the sweep ended ``failed`` stays so."""
    counts = reads.run_counts(run)
    finished = counts["scored"] + counts["error"]
    now = timezone.now()
    fraction = finished / run.total if run.total else 1.0
    message = f"{finished} of {run.total} scored" + (f", {counts['error']} failed" if counts["error"] else "")
    Job.objects.filter(pk=run.job_id, progress__lt=fraction).exclude(status__in=FINAL).update(
        status=Job.Status.RUNNING, progress=fraction, message=message, result={"total": run.total, **counts},
        updated_at=now,
    )  # fmt: skip
    if counts["pending"]:
        return
    # The finished row and the seal of it in one transaction: no reader sees one without
    # the other, and a crash between them cannot leave a run that fails its own seal.
    with transaction.atomic():
        if not ScoringRun.objects.filter(pk=run.pk, finished_at__isnull=True).update(finished_at=now):
            return
        run.finished_at = now
        Job.objects.filter(pk=run.job_id).update(
            status=Job.Status.DONE, progress=1.0, message=message, result={"total": run.total, **counts}, updated_at=now
        )
        record(
            None,
            "finish_scoring_run",
            run,
            packet=run.version.packet,
            hashes={"ground_truth": run.ground_truth_sha256, "row": row_seal(run)},
            details={"scorer_id": run.scorer_id, "version": run.version_id, **counts},
        )
    if run.total >= BULK_ROWS:  # the leaderboard's plan rests on the scores' statistics
        transaction.on_commit(lambda: refresh_statistics(SubmissionScore, Submission))


# ------------------------------------------------------------------------ leaderboard


# ------------------------------------------------------------------------ calibration


def do_compute_calibration(version: GroundTruthVersion, *, scorer_id: str | None = None) -> VersionCalibration:
    """Compute (or recompute) the calibration anchors of a version under a scorer
    (default: the task kind's). A ground truth the scorer cannot read is recorded
    as a blocking problem, not raised."""
    scorer_id = check_scorer_id(version, scorer_id)
    params: dict = {}
    try:
        inputs = scoring_inputs(version, scorer_id)
        params = inputs.params
        rows = calibration_rules.anchor_rows(anchors(scorer_id, inputs.ground_truth, **params))
        if adapter_for_scorer(scorer_id).reference_calibration:  # prior and retrieval rows (docs/grading.md)
            rows += reference_calibration_rows(version, inputs)
        problems = calibration_rules.problems(rows)
    except ScoringError as error:
        rows, problems = [], [f"the anchors could not be computed: {error}"]
    status = VersionCalibration.Status.BLOCKED if problems else VersionCalibration.Status.OK
    calibration, _ = VersionCalibration.objects.update_or_create(
        version=version,
        scorer_id=scorer_id,
        defaults={
            "params": params,
            "anchors": rows,
            "status": status,
            "problems": problems,
            "scorer_code_sha256": scorer_code_sha256(),
        },
    )
    calibration.refresh_from_db(fields=["computed_at"])  # the seal covers the stored time
    record(
        None,
        "compute_calibration",
        calibration,
        packet=version.packet,
        hashes={"version": version.sha256, "row": row_seal(calibration)},
        details={"version": version.pk, "scorer_id": scorer_id, "status": status},
    )
    return calibration


def recompute_calibration(version: GroundTruthVersion) -> VersionCalibration | None:
    """The anchors of a version computed again (the task ``annotator.recompute_calibration``,
    once CLIP features arrive). A failure is logged and leaves the earlier anchors as they
    were; None then."""
    try:
        with transaction.atomic():
            return do_compute_calibration(version)
    except Exception:
        logger.exception("calibration anchors of version %s failed", version.pk)
        return None


@transaction.atomic
def do_mark_version_ready(version: GroundTruthVersion, *, actor) -> VersionReadiness:
    """Mark a version ready for grading. Refused, with the reason, unless its anchors
    under the task scorer hold (oracle 1.0, empty 0.0)."""
    if VersionReadiness.objects.filter(version=version).exists():
        raise Conflict(f"version {version.pk} is already marked ready")
    scorer_id = version.packet.task_kind.scorer_id
    calibration = verified_calibration(VersionCalibration.objects.filter(version=version, scorer_id=scorer_id).first())
    if calibration is None or calibration.scorer_code_sha256 != scorer_code_sha256():
        calibration = do_compute_calibration(version, scorer_id=scorer_id)
    if calibration.status != VersionCalibration.Status.OK:
        raise Conflict("the version cannot be marked ready: " + "; ".join(calibration.problems))
    readiness = VersionReadiness.objects.create(
        version=version, scorer_id=scorer_id, anchors=calibration.anchors, marked_by=actor
    )
    readiness.refresh_from_db(fields=["marked_at"])
    record(
        actor,
        "mark_version_ready",
        version,
        packet=version.packet,
        hashes={"version": version.sha256, "readiness": row_seal(readiness)},
        details={"scorer_id": scorer_id, "anchors": {a["name"]: a["reward"] for a in calibration.anchors}},
    )
    return readiness


# -------------------------------------------------------------------------- agreement


@transaction.atomic
def do_agreement_report(packet: Packet, *, actor) -> AgreementReport:
    """Store the agreement report of a packet (``grading.reads.compute_agreement``) for
    its frozen ledgers, its latest adjudicated version and the current scorer code.
    Kept per (ledger hashes, version, scorer code); repeated calls return it (the packet
    row is locked first, so two calls at once store it once).

    Precondition: both ledgers are frozen (``Conflict`` otherwise).
    """
    Packet.objects.select_for_update().filter(pk=packet.pk).first()  # two tasks at once store one report
    ledgers = reads.frozen_ledgers(packet)
    if ledgers is None:
        raise Conflict("the agreement report needs both ledgers frozen")
    existing = reads.stored_agreement(packet, ledgers)
    if existing is not None:
        return existing
    scorer_id = packet.task_kind.scorer_id
    version = reads.latest_adjudicated(packet)
    created = AgreementReport.objects.create(
        packet=packet,
        scorer_id=scorer_id,
        ledger_a_sha256=ledgers["A"].sha256,
        ledger_b_sha256=ledgers["B"].sha256,
        version=version,
        report=reads.compute_agreement(packet, ledgers, version),
        created_by=actor,
    )
    created.refresh_from_db(fields=["report", "created_at"])  # the seal covers the stored values
    record(
        actor,
        "agreement_report",
        created,
        packet=packet,
        hashes={"ledger_a": ledgers["A"].sha256, "ledger_b": ledgers["B"].sha256, "row": row_seal(created)},
        details={"version": version.pk if version else None, "scorer_id": scorer_id},
    )
    return created
