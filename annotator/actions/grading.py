"""Grading agent submissions: upload, scoring runs, calibration anchors, agreement.

Every write is one ``do_*`` function; REST views, the Celery tasks and the
``score_submissions`` command call them and do nothing else of substance.

* ``do_upload_submissions`` stores files byte for byte with their SHA-256.
* ``do_start_scoring_run`` pins a run to one ground-truth version and one scorer id,
  creates a pending score per submission and (after commit) sends the batch to
  Celery as a group of ``score_batch`` tasks.
* ``do_score_batch`` / ``do_score_submission`` run in the worker (or in-process for
  the command line): the scorer's output bytes are stored exactly as the verifier
  CLI writes them. A bad file scores 0 with the scorer's reason; a scorer failure is
  recorded on that one score; neither stops the run.
* ``do_compute_calibration`` runs the anchors of ``python -m scoring anchors``; it is
  called whenever a version is published. ``do_mark_version_ready`` refuses a
  version whose oracle is not 1.0 or whose empty anchor is not 0.0, and says why.
* ``do_agreement_report`` compares the two frozen ledgers (and each with a version).
"""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from collections.abc import Callable, Sequence

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotator.actions.audit import record
from annotator.documents import ledger_submission
from annotator.errors import Conflict, InvalidInput
from annotator.grading import calibration as calibration_rules
from annotator.grading import leaderboard as board
from annotator.grading.diagnostics import diagnostics
from annotator.grading.inputs import (
    ScoringInputs,
    check_scorer_id,
    scorer_code_sha256,
    scoring_inputs,
    task_parameters,
)
from annotator.grading.uploads import SubmissionFile
from annotator.integrity import TamperedData, frozen_events
from annotator.models import (
    AgreementReport,
    GroundTruthVersion,
    Job,
    Ledger,
    Packet,
    ScoringRun,
    Submission,
    SubmissionScore,
    VersionCalibration,
    VersionReadiness,
)
from annotator.queue import SCORE_BATCH, enqueue_group_on_commit
from scoring import SolutionRejected, agreement, anchors, get_scorer, score_submission
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


@transaction.atomic
def do_upload_submissions(packet: Packet, files: Sequence[SubmissionFile], *, actor) -> list[Submission]:
    """Store a batch of submission files for a packet, as uploaded.

    Precondition: the caller has checked that ``actor`` is a maintainer and built
    ``files`` with the caps of the packet's scorer (``annotator.grading.uploads``).
    """
    if not files:
        raise InvalidInput("no submission files were uploaded", field="files")
    batch = uuid.uuid4().hex
    created = Submission.objects.bulk_create(
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
    )
    if any(s.pk is None for s in created):  # backends without RETURNING on bulk insert
        created = list(Submission.objects.filter(batch=batch).order_by("id"))
    record(
        actor,
        "upload_submissions",
        created[0],
        packet=packet,
        hashes={"batch": batch},
        details={"count": len(created), "submissions": [[s.pk, s.label, s.sha256, s.size_bytes] for s in created]},
    )
    return created


# ----------------------------------------------------------------------- scoring runs


def resolve_version(packet: Packet, *, version_id=None, tier: str | None = None) -> GroundTruthVersion:
    """The version a run is pinned to: the one named, else the latest of ``tier``
    (default: the latest adjudicated version)."""
    versions = GroundTruthVersion.objects.filter(packet=packet).select_related("packet__task_kind", "packet__video")
    if version_id is not None:
        version = versions.filter(pk=version_id).first()
        if version is None:
            raise InvalidInput(f"packet {packet.pk} has no version {version_id}", field="version")
        return version
    tier = tier or GroundTruthVersion.Tier.ADJUDICATED
    if tier not in GroundTruthVersion.Tier.values:
        raise InvalidInput(f"tier must be one of {', '.join(GroundTruthVersion.Tier.values)}", field="tier")
    version = versions.filter(tier=tier).order_by("-number").first()
    if version is None:
        raise Conflict(f"packet {packet.pk} has no {tier} version yet")
    return version


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
        hashes={"ground_truth": inputs.ground_truth_sha256, "version": version.sha256},
        details={"scorer_id": scorer_id, "version": version.pk, "submissions": len(submissions)},
    )
    if dispatch:
        chunks = chunked([r.pk for r in results], chunk_size)
        enqueue_group_on_commit(SCORE_BATCH, [(run.pk, chunk) for chunk in chunks])
    return run


def run_chunks(run: ScoringRun, chunk_size: int | None = None) -> list[list[int]]:
    """The pending scores of a run in batches (for callers that score in-process)."""
    ids = list(run.results.filter(status=SubmissionScore.Status.PENDING).order_by("id").values_list("pk", flat=True))
    return chunked(ids, chunk_size)


def do_score_submission(result: SubmissionScore, inputs: ScoringInputs) -> bool:
    """Score one pending submission and store the scorer's bytes; False if it was
    already final (a redelivered task). Never raises for a bad submission."""
    submission = result.submission
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


def do_score_batch(run_id: int, result_ids: Sequence[int], *, progress: Callable[[int], None] | None = None) -> int:
    """Score the given pending results of a run, then record progress on its Job
    (and finish the run when nothing is pending). Returns how many were scored now."""
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
            for result in pending[start : start + COMMIT_EVERY]:
                if inputs is None:
                    _fail(result, why)
                else:
                    done += do_score_submission(result, inputs)
                if progress is not None:
                    progress(1)
        if time.monotonic() - reported >= PROGRESS_SECONDS:
            update_progress(run)
            reported = time.monotonic()
    update_progress(run)
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


def _fail(result: SubmissionScore, message: str) -> None:
    SubmissionScore.objects.filter(pk=result.pk, status=SubmissionScore.Status.PENDING).update(
        status=SubmissionScore.Status.ERROR, error=message, scored_at=timezone.now()
    )


def run_counts(run: ScoringRun) -> dict:
    counts = dict(run.results.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    return {status: counts.get(status, 0) for status in SubmissionScore.Status.values}


def update_progress(run: ScoringRun) -> None:
    """Write the run's progress to its Job; the first caller to see it complete
    finishes it. Progress never moves backwards (batches finish in any order)."""
    counts = run_counts(run)
    finished = counts["scored"] + counts["error"]
    now = timezone.now()
    fraction = finished / run.total if run.total else 1.0
    message = f"{finished} of {run.total} scored" + (f", {counts['error']} failed" if counts["error"] else "")
    Job.objects.filter(pk=run.job_id, progress__lt=fraction).exclude(status=Job.Status.DONE).update(
        status=Job.Status.RUNNING, progress=fraction, message=message, result={"total": run.total, **counts},
        updated_at=now,
    )  # fmt: skip
    if counts["pending"] or not ScoringRun.objects.filter(pk=run.pk, finished_at__isnull=True).update(finished_at=now):
        return
    Job.objects.filter(pk=run.job_id).update(
        status=Job.Status.DONE, progress=1.0, message=message, result={"total": run.total, **counts}, updated_at=now
    )
    record(
        None,
        "finish_scoring_run",
        run,
        packet=run.version.packet,
        hashes={"ground_truth": run.ground_truth_sha256},
        details={"scorer_id": run.scorer_id, "version": run.version_id, **counts},
    )


# ------------------------------------------------------------------------ leaderboard


def latest_scores(version: GroundTruthVersion, scorer_id: str) -> list[SubmissionScore]:
    """The newest final score of every submission against (version, scorer)."""
    scores = (
        SubmissionScore.objects.filter(version=version, scorer_id=scorer_id)
        .exclude(status=SubmissionScore.Status.PENDING)
        .select_related("submission")
        .defer("reward_json", "reward_txt", "details_json", "submission__content")
        .order_by("submission_id", "-run_id", "-id")
    )
    latest: dict[int, SubmissionScore] = {}
    for score in scores:
        latest.setdefault(score.submission_id, score)
    return list(latest.values())


def leaderboard(version: GroundTruthVersion, scorer_id: str, *, sort: str | None = None) -> dict:
    family = get_scorer(scorer_id).kind
    rows = [
        board.make_row(
            family,
            kind="agent",
            label=s.submission.label,
            reward=s.reward,
            reason=s.reason if s.status == SubmissionScore.Status.SCORED else f"scorer error: {s.error}",
            details=s.details,
            submission=s.submission_id,
            sha256=s.submission.sha256,
            result=s.pk,
            run=s.run_id,
            scored_at=s.scored_at.isoformat() if s.scored_at else None,
        )
        for s in latest_scores(version, scorer_id)
    ]
    _add_bundle_runs(rows)
    rows += human_rows(version, scorer_id)
    board.rank(rows)
    try:
        rows = board.sort_rows(rows, sort, family)
    except board.BadSort as error:
        raise InvalidInput(str(error), field="sort") from None
    return {
        "version": {"id": version.pk, "tier": version.tier, "number": version.number, "sha256": version.sha256},
        "scorer_id": scorer_id,
        "columns": list(board.columns(family)),
        "rows": rows,
        "references": board.reference_rows(family, _anchors(version, scorer_id)),
    }


def _anchors(version: GroundTruthVersion, scorer_id: str) -> list[dict]:
    calibration = VersionCalibration.objects.filter(version=version, scorer_id=scorer_id).first()
    return calibration.anchors if calibration is not None else []


def _add_bundle_runs(rows: list[dict]) -> None:
    """Rows of executable bundles get the run's id, stage timings and outcome."""
    from annotator.actions.bundles import bundle_summaries

    runs = bundle_summaries(r["submission"] for r in rows)
    for row in rows:
        if row["submission"] in runs:
            row.update(kind="bundle", **runs[row["submission"]])


def _frozen_ledgers(packet: Packet) -> dict[str, Ledger] | None:
    ledgers = {ledger.side: ledger for ledger in Ledger.objects.filter(packet=packet).select_related("annotator")}
    if len(ledgers) != 2 or not all(ledger.is_frozen for ledger in ledgers.values()):
        return None
    return ledgers


def ledger_as_submission(packet: Packet, ledger: Ledger) -> tuple[dict, bytes]:
    """A frozen ledger in the scorer's ledger shape and as submission bytes."""
    schema = packet.task_kind.schema
    events = frozen_events(ledger)
    document = ledger_submission(events, schema)
    if schema["family"] == "moments":
        video_id = packet.params.get("video_id") or f"video-{packet.video_id}"
        source = packet.params.get("source", "frameledger")
        queries = [{**q, "video_id": video_id, "source": source} for q in document["queries"]]
        rows = "".join(
            json.dumps({"query_id": q["query_id"], "start": q["intervals"][0][0], "end": q["intervals"][0][1]}) + "\n"
            for q in queries
        )
        return {"queries": queries}, rows.encode("utf-8")
    return document, json.dumps(document).encode("utf-8")


def human_rows(version: GroundTruthVersion, scorer_id: str) -> list[dict]:
    """The human ceiling: each frozen annotator ledger scored like an agent."""
    packet = version.packet
    ledgers = _frozen_ledgers(packet)
    if ledgers is None:
        return []
    family = get_scorer(scorer_id).kind
    inputs = scoring_inputs(version, scorer_id)
    rows = []
    for side, ledger in sorted(ledgers.items()):
        _, data = ledger_as_submission(packet, ledger)
        outcome = score_submission(scorer_id, inputs.ground_truth, data, **inputs.params)
        rows.append(
            board.make_row(
                family,
                kind="human",
                label=f"annotator {side} ({ledger.annotator.username})",
                reward=outcome.reward,
                reason=outcome.reason,
                details=outcome.details,
                sha256=ledger.sha256,
            )  # fmt: skip
        )
    return rows


def reference_frames(version: GroundTruthVersion) -> list[tuple[int, int] | None]:
    """Where each exported ground-truth event sits in the video, when it says so."""
    schema = version.packet.task_kind.schema
    boundaries = schema.get("boundary_fields") or []
    frames = []
    for event in frozen_events(version):
        values = [event.get(name) for name in boundaries]
        ok = len(values) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        frames.append(tuple(values) if ok else None)
    return frames


def score_diagnostics(score: SubmissionScore) -> dict:
    """Timeline diagnostics of one final score (recomputed from the stored bytes)."""
    if score.status != SubmissionScore.Status.SCORED:
        raise Conflict(f"score {score.pk} is {score.status}; there is nothing to diagnose")
    run, submission, version = score.run, score.submission, score.version
    video = version.packet.video
    if submission.content is not None:
        solution: bytes | BaseException = bytes(submission.content)
    else:
        solution = SolutionRejected(submission.rejected_reason)
    inputs = scoring_inputs(version, score.scorer_id)
    body = diagnostics(
        score.scorer_id,
        inputs.ground_truth,
        solution,
        run.params,
        score.details or {},
        reference_frames=reference_frames(version),
        frame_rate=(video.frame_rate_num, video.frame_rate_den),
    )
    body.update(
        result=score.pk,
        reward=score.reward,
        submission={"id": submission.pk, "label": submission.label, "sha256": submission.sha256},
        version={"id": version.pk, "tier": version.tier, "number": version.number},
        packet=version.packet_id,
        video={"frame_count": video.frame_count, "frame_rate": [video.frame_rate_num, video.frame_rate_den]},
    )
    return body


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
        if get_scorer(scorer_id).kind == "moments":  # reference rows: prior and retrieval (docs/grading.md)
            from annotator.grading.moment_corpus import reference_calibration_rows

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
    return calibration


def compute_calibration_on_publish(version: GroundTruthVersion) -> VersionCalibration | None:
    """Called by the publish operations for every new version. A failure here must
    not undo the publication: it is logged and the version stays unready."""
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
    calibration = VersionCalibration.objects.filter(version=version, scorer_id=scorer_id).first()
    if calibration is None or calibration.scorer_code_sha256 != scorer_code_sha256():
        calibration = do_compute_calibration(version, scorer_id=scorer_id)
    if calibration.status != VersionCalibration.Status.OK:
        raise Conflict("the version cannot be marked ready: " + "; ".join(calibration.problems))
    readiness = VersionReadiness.objects.create(
        version=version, scorer_id=scorer_id, anchors=calibration.anchors, marked_by=actor
    )
    record(
        actor,
        "mark_version_ready",
        version,
        packet=version.packet,
        hashes={"version": version.sha256},
        details={"scorer_id": scorer_id, "anchors": {a["name"]: a["reward"] for a in calibration.anchors}},
    )
    return readiness


# -------------------------------------------------------------------------- agreement


def latest_adjudicated(packet: Packet) -> GroundTruthVersion | None:
    return (
        GroundTruthVersion.objects.filter(packet=packet, tier=GroundTruthVersion.Tier.ADJUDICATED)
        .order_by("-number")
        .first()
    )


def _versus_version(packet: Packet, version: GroundTruthVersion, scorer_id: str, ledger: Ledger) -> dict:
    inputs = scoring_inputs(version, scorer_id)
    document, data = ledger_as_submission(packet, ledger)
    outcome = score_submission(scorer_id, inputs.ground_truth, data, **inputs.params)
    return {
        "reward": outcome.reward,
        "reason": outcome.reason,
        "details": outcome.details,
        "agreement": agreement(scorer_id, document, inputs.ground_truth, **inputs.params),
    }


@transaction.atomic
def do_agreement_report(packet: Packet, *, actor) -> AgreementReport:
    """Annotator A vs B with the task scorer (both ways, per-field kappa, boundary
    differences, unmatched events) and each annotator vs the latest adjudicated
    version. Kept per (ledger hashes, version, scorer code); repeated calls return it.

    Precondition: both ledgers are frozen (``Conflict`` otherwise).
    """
    ledgers = _frozen_ledgers(packet)
    if ledgers is None:
        raise Conflict("the agreement report needs both ledgers frozen")
    scorer_id = packet.task_kind.scorer_id
    version = latest_adjudicated(packet)
    code = scorer_code_sha256()
    existing = AgreementReport.objects.filter(
        packet=packet,
        scorer_id=scorer_id,
        ledger_a_sha256=ledgers["A"].sha256,
        ledger_b_sha256=ledgers["B"].sha256,
        version=version,
        report__scorer_code_sha256=code,
    ).first()
    if existing is not None:
        return existing
    a_document, _ = ledger_as_submission(packet, ledgers["A"])
    b_document, _ = ledger_as_submission(packet, ledgers["B"])
    params = task_parameters(packet, scorer_id)
    root_key = packet.task_kind.schema["root_key"]
    report = {
        "scorer_id": scorer_id,
        "scorer_code_sha256": code,
        "params": params,
        "ledgers": {
            side: {"sha256": ledger.sha256, "annotator": ledger.annotator.username, "events": len(doc[root_key])}
            for side, ledger, doc in (("A", ledgers["A"], a_document), ("B", ledgers["B"], b_document))
        },
        "a_vs_b": agreement(scorer_id, a_document, b_document, **params),
        "version": None,
        "versus_version": {},
    }
    if version is not None:
        report["version"] = {"id": version.pk, "tier": version.tier, "number": version.number, "sha256": version.sha256}
        report["versus_version"] = {
            side: _versus_version(packet, version, scorer_id, ledger) for side, ledger in sorted(ledgers.items())
        }
    created = AgreementReport.objects.create(
        packet=packet,
        scorer_id=scorer_id,
        ledger_a_sha256=ledgers["A"].sha256,
        ledger_b_sha256=ledgers["B"].sha256,
        version=version,
        report=json.loads(json.dumps(report, default=str)),
        created_by=actor,
    )
    record(
        actor,
        "agreement_report",
        created,
        packet=packet,
        hashes={"ledger_a": ledgers["A"].sha256, "ledger_b": ledgers["B"].sha256},
        details={"version": version.pk if version else None, "scorer_id": scorer_id},
    )
    return created
