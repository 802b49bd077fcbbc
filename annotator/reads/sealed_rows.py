"""Reading graded rows and decisions through their seals (``annotator.base.seals``).

A submission, a scoring run, a final score and a decision are sealed when written: the
audit entry of the write records the SHA-256 of the row's columns (``upload_submissions`` /
``bundle_submission``: every submission of the batch; ``start_scoring_run`` and
``finish_scoring_run``: the run; ``score_results``: every score of a committed batch;
``decide_item``: the decision as decided). Reads recompute the seal from the row and compare
it with the latest one recorded; a submission's bytes are hashed again against its
``sha256`` whenever they are read. A mismatch is ``TamperedData`` (``integrity_error``,
logged and audited); ``manage.py verify_integrity`` checks every row the same way
(``annotator.reads.verify``).

Rows recorded before seals existed (their audit entry carries none) are checked for what
they have: a submission's bytes against its hash.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotator.base.canonical import sha256_hex
from annotator.models import AuditEntry, Decision, ScoringRun, Submission, SubmissionScore
from annotator.reads.integrity import fail, seal_problem

UPLOAD_OPERATIONS = ("upload_submissions", "bundle_submission")
RUN_OPERATIONS = ("start_scoring_run", "finish_scoring_run")
SCORE_OPERATION = "score_results"
MISSING = ("no seal for it in the audit log", "a seal", "none")


@dataclass
class RunSeals:
    row: str | None = None  # the latest seal of the run row
    sealed: bool = False  # started with seals: every final score must carry one
    scores: dict[str, str] = field(default_factory=dict)


@dataclass
class BatchSeals:
    sealed: bool = False
    rows: dict[str, str] = field(default_factory=dict)


def _entries(**filters):
    return AuditEntry.objects.filter(**filters).order_by("seq").values_list("object_id", "operation", "hashes")


def run_seals(run_ids: Iterable[int] | None = None) -> dict[str, RunSeals]:
    """Seals of runs and their scores by run id (every run when ``run_ids`` is None)."""
    filters = {"object_type": ScoringRun._meta.label, "operation__in": [*RUN_OPERATIONS, SCORE_OPERATION]}
    if run_ids is not None:
        filters["object_id__in"] = sorted({str(pk) for pk in run_ids})
    found: dict[str, RunSeals] = defaultdict(RunSeals)
    for object_id, operation, hashes in _entries(**filters).iterator(chunk_size=2000):
        seals = found[object_id]
        if operation == SCORE_OPERATION:
            seals.scores.update(hashes.get("scores", {}))
        elif "row" in hashes:
            seals.row = hashes["row"]
            seals.sealed = True
    return found


def batch_seals(batches: Iterable[str] | None = None) -> dict[str, BatchSeals]:
    """Seals of submissions by upload batch (every batch when ``batches`` is None)."""
    filters = {"operation__in": UPLOAD_OPERATIONS}
    if batches is not None:
        filters["hashes__batch__in"] = sorted(set(batches))
    found: dict[str, BatchSeals] = defaultdict(BatchSeals)
    for _, _, hashes in _entries(**filters).iterator(chunk_size=2000):
        seals = found[str(hashes.get("batch"))]
        if "submissions" in hashes:
            seals.sealed = True
            seals.rows.update(hashes["submissions"])
    return found


def decision_seals(decision_ids: Iterable[int] | None = None) -> dict[str, str | None]:
    """The latest recorded seal of each decision (None: decided before seals existed)."""
    filters = {"object_type": Decision._meta.label, "operation": "decide_item"}
    if decision_ids is not None:
        filters["object_id__in"] = sorted({str(pk) for pk in decision_ids})
    return {object_id: hashes.get("row") for object_id, _, hashes in _entries(**filters).iterator(chunk_size=2000)}


# ------------------------------------------------------------------ problems per row


def submission_problem(submission: Submission, seals: dict[str, BatchSeals]):
    if "content" not in submission.get_deferred_fields() and submission.content is not None:
        actual = sha256_hex(bytes(submission.content))
        if actual != submission.sha256:
            return "its bytes do not match its SHA-256", submission.sha256, actual
    batch = seals.get(submission.batch)
    if batch is None:
        return "no upload record for it in the audit log", "an upload record", "none"
    if not batch.sealed:
        return None
    return seal_problem(submission, batch.rows.get(str(submission.pk))) or (
        MISSING if str(submission.pk) not in batch.rows else None
    )


def run_problem(run: ScoringRun, seals: dict[str, RunSeals]):
    found = seals.get(str(run.pk))
    if found is None or not found.sealed:
        return None if found is not None else ("no start record for it in the audit log", "a start record", "none")
    return seal_problem(run, found.row)


def score_problem(score: SubmissionScore, seals: dict[str, RunSeals]):
    if score.status == SubmissionScore.Status.PENDING:
        return None
    found = seals.get(str(score.run_id))
    if found is None or not found.sealed:
        return None if found is not None else ("its run has no start record in the audit log", "a record", "none")
    recorded = found.scores.get(str(score.pk))
    return MISSING if recorded is None else seal_problem(score, recorded)


def decision_problem(decision: Decision, seals: dict[str, str | None]):
    if str(decision.pk) not in seals:
        return "no decide record for it in the audit log", "a decide record", "none"
    return seal_problem(decision, seals[str(decision.pk)])


# ------------------------------------------------------------------ verified reads


def _raise_first(pairs) -> None:
    for obj, found in pairs:
        if found is not None:
            raise fail(obj, found)


def verify_submissions(submissions: Iterable[Submission]) -> None:
    submissions = list(submissions)
    if submissions:
        seals = batch_seals(s.batch for s in submissions)
        _raise_first((s, submission_problem(s, seals)) for s in submissions)


def verify_runs(runs: Iterable[ScoringRun]) -> None:
    runs = list(runs)
    if runs:
        seals = run_seals(r.pk for r in runs)
        _raise_first((r, run_problem(r, seals)) for r in runs)


def verify_scores(scores: Iterable[SubmissionScore]) -> None:
    """Each score, and the submission it scores, through their seals."""
    scores = list(scores)
    if not scores:
        return
    seals = run_seals(s.run_id for s in scores)
    _raise_first((s, score_problem(s, seals)) for s in scores)
    verify_submissions({s.submission_id: s.submission for s in scores}.values())


def verify_decisions(decisions: Iterable[Decision]) -> None:
    decisions = list(decisions)
    if decisions:
        seals = decision_seals(d.pk for d in decisions)
        _raise_first((d, decision_problem(d, seals)) for d in decisions)
