"""Reading graded rows and decisions through their seals (``annotator.base.seals``).

A submission, a scoring run, a final score, a decision, a union with its items and a bundle
run are sealed when written (``build_union``: the union row and every item as one seal;
``submit_bundle``: a bundle run's submitted columns, ``finish_bundle_run``: all of them once
it has ended, done or error): the
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
from itertools import chain

from annotator.base.canonical import sha256_hex
from annotator.base.seals import (
    UNION_BLOCK,
    bundle_submit_seal,
    union_block_seal,
    union_block_seals,
    union_blocks_seal,
    union_seal,
)
from annotator.models import (
    AuditEntry,
    BundleRun,
    Decision,
    ScoringRun,
    Submission,
    SubmissionScore,
    Union,
    UnionItem,
)
from annotator.reads.integrity import authentic, fail, seal_problem

UPLOAD_OPERATIONS = ("upload_submissions", "bundle_submission")
RUN_OPERATIONS = ("start_scoring_run", "finish_scoring_run")
SCORE_OPERATION = "score_results"
UNION_OPERATION = "build_union"
BUNDLE_OPERATIONS = ("submit_bundle", "finish_bundle_run")
MISSING = ("no seal for it in the audit log", "a seal", "none")


@dataclass
class RunSeals:
    row: str | None = None  # the latest seal of the run row
    sealed: bool = False  # started with seals: every final score must carry one
    scores: dict[str, str] = field(default_factory=dict)


@dataclass
class BundleSeals:
    submitted: str | None = None  # the seal of the submitted columns (None: submitted before seals)
    row: str | None = None  # the seal of every column, recorded when the run ended


@dataclass
class BatchSeals:
    sealed: bool = False
    rows: dict[str, str] = field(default_factory=dict)


def _entries(**filters):
    """(object id, operation, hashes) of the authentic entries (``integrity.authentic``) that
    ``filters`` select, in chain order."""
    for entry in authentic(AuditEntry.objects.filter(**filters).order_by("seq").iterator(chunk_size=2000)):
        yield entry.object_id, entry.operation, entry.hashes


def run_seals(run_ids: Iterable[int] | None = None, score_ids: Iterable[int] | None = None) -> dict[str, RunSeals]:
    """Seals of runs and their scores by run id (every run when ``run_ids`` is None).

    ``score_ids``: only the ``score_results`` entries that hold a seal of one of these scores
    are read (a page of a leaderboard costs the page, not the run: the database picks the
    entries by key); a score they do not name is then MISSING, as it would be anyway."""
    filters = {"object_type": ScoringRun._meta.label, "operation__in": [*RUN_OPERATIONS, SCORE_OPERATION]}
    if run_ids is not None:
        filters["object_id__in"] = sorted({str(pk) for pk in run_ids})
    found: dict[str, RunSeals] = defaultdict(RunSeals)
    if score_ids is None:
        entries = _entries(**filters)
    else:
        keys = sorted({str(pk) for pk in score_ids})
        score_filters = {**filters, "operation__in": [SCORE_OPERATION], "hashes__scores__has_any_keys": keys}
        entries = chain(_entries(**{**filters, "operation__in": RUN_OPERATIONS}), _entries(**score_filters))
    for object_id, operation, hashes in entries:
        seals = found[object_id]
        if operation == SCORE_OPERATION:
            seals.scores.update(hashes.get("scores", {}))
        elif "row" in hashes:
            seals.row = hashes["row"]
            seals.sealed = True
    return found


def batch_seals(
    batches: Iterable[str] | None = None, submission_ids: Iterable[int] | None = None
) -> dict[str, BatchSeals]:
    """Seals of submissions by upload batch (every batch when ``batches`` is None).

    ``submission_ids``: only the entries that hold a seal of one of these submissions are
    read (a batch is recorded a chunk per entry); whether a batch was sealed at all is
    still asked of every entry of it, so a row no entry names is MISSING, never unchecked."""
    filters = {"operation__in": UPLOAD_OPERATIONS}
    if batches is not None:
        filters["hashes__batch__in"] = sorted(set(batches))
    found: dict[str, BatchSeals] = defaultdict(BatchSeals)
    if submission_ids is not None:
        keys = sorted({str(pk) for pk in submission_ids})
        sealed = AuditEntry.objects.filter(**filters, hashes__has_key="submissions")
        for batch in sealed.values_list("hashes__batch", flat=True).distinct():
            found[str(batch)].sealed = True
        filters["hashes__submissions__has_any_keys"] = keys
    for _, _, hashes in _entries(**filters):
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
    return {object_id: hashes.get("row") for object_id, _, hashes in _entries(**filters)}


@dataclass(frozen=True)
class UnionSeal:
    """A union's recorded seal: ``row`` (None: built before seals existed) and, for unions
    sealed by blocks (``seals.union_blocks_seal``), the item count and the block seals."""

    row: str | None
    count: int | None = None
    blocks: tuple[str, ...] | None = None


def union_seals(union_ids: Iterable[int] | None = None) -> dict[str, UnionSeal]:
    """The recorded seal of each union."""
    filters = {"object_type": Union._meta.label, "operation": UNION_OPERATION}
    if union_ids is not None:
        filters["object_id__in"] = sorted({str(pk) for pk in union_ids})
    found = {}
    for object_id, _, hashes in _entries(**filters):
        blocks = hashes.get("blocks")
        found[object_id] = UnionSeal(hashes.get("row"), hashes.get("count"), None if blocks is None else tuple(blocks))
    return found


def bundle_seals(run_ids: Iterable[int] | None = None) -> dict[str, BundleSeals]:
    """Seals of bundle runs by run id (every run when ``run_ids`` is None)."""
    filters = {"object_type": BundleRun._meta.label, "operation__in": BUNDLE_OPERATIONS}
    if run_ids is not None:
        filters["object_id__in"] = sorted({str(pk) for pk in run_ids})
    found: dict[str, BundleSeals] = defaultdict(BundleSeals)
    for object_id, operation, hashes in _entries(**filters):
        seals = found[object_id]
        if operation == "submit_bundle":
            seals.submitted = hashes.get("row")
        else:
            seals.row = hashes.get("row", seals.row)
    return found


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


def union_problem(union: Union, seals: dict[str, UnionSeal], items: Iterable[UnionItem] | None = None):
    """The union row and all its items (``items``: as read by the caller, else queried)
    against the seal of its ``build_union`` entry."""
    if str(union.pk) not in seals:
        return "no build record for it in the audit log", "a build record", "none"
    recorded = seals[str(union.pk)]
    if recorded.row is None:
        return None
    rows = UnionItem.objects.filter(union=union).iterator(chunk_size=1000) if items is None else items
    if recorded.blocks is None:
        actual = union_seal(union, rows)
    else:
        rows = list(rows)
        actual = union_blocks_seal(union, union_block_seals(rows), len(rows))
    if actual != recorded.row:
        return "its items or columns differ from the seal the audit log recorded", recorded.row, actual
    return None


def union_item_problem(union: Union, item: UnionItem, recorded: UnionSeal):
    """The union row and the block of items that holds ``item`` against the recorded seal
    (a union sealed by blocks; ``union_problem`` checks every block)."""
    if recorded.row is None or recorded.blocks is None or recorded.count is None:
        return None
    block = item.position // UNION_BLOCK
    if item.union_id != union.pk or block >= len(recorded.blocks):
        return "an item past the items the audit log recorded", f"{recorded.count} items", f"position {item.position}"
    first = block * UNION_BLOCK
    rows = list(UnionItem.objects.filter(union=union, position__gte=first, position__lt=first + UNION_BLOCK))
    return union_range_problem(union, rows, first, first + UNION_BLOCK, recorded)


def bundle_run_problem(run: BundleRun, seals: dict[str, BundleSeals]):
    """A bundle run against its seals: the submitted columns always (the worker never
    writes them), every column once the seal of its end is recorded (whatever its status
    says now). A run that says it has ended without that seal, though submitted with
    seals, was ended outside FrameLedger. Runs from before seals are checked for what
    their entries carry; a run with no entry at all is a problem once it says it ended."""
    ended = run.status in (BundleRun.Status.DONE, BundleRun.Status.ERROR)
    found = seals.get(str(run.pk))
    if found is None:
        return ("no submit record for it in the audit log", "a submit record", "none") if ended else None
    if found.submitted is not None:
        actual = bundle_submit_seal(run)
        if actual != found.submitted:
            return "its columns differ from the seal the audit log recorded", found.submitted, actual
    if found.row is not None:
        return seal_problem(run, found.row)
    if ended and found.submitted is not None:
        return MISSING
    return None


# ------------------------------------------------------------------ verified reads


def settled(obj, found, problem_of, seals_of):
    """The problem ``found`` for ``obj`` once a fresh read confirms it, else None.

    Each statement sees what was committed when it began (PostgreSQL's read committed;
    SQLite outside a transaction), so a row and its seals read on either side of a writer's
    commit differ with nothing tampered: a bundle run read while running, then the seal of
    its end; or, in ``verify_integrity``, seals read before a row was written. So the row is
    read again (``obj`` takes the stored columns if they changed) and checked against seals
    read after it (``seals_of([obj])``). The problem stands when a read of both that comes
    after the row settled finds it again: a change made below the ORM is never hidden, and a
    row that keeps changing under the reader is reported after a few reads."""
    for _ in range(READS):
        if found is None:
            return None
        changed = _caught_up(obj)
        again = problem_of(obj, seals_of([obj]))
        if not changed and again == found:
            return found
        found = again
    return found


READS = 3


def _caught_up(obj) -> bool:
    """Whether the stored row differs from ``obj``'s loaded columns; ``obj`` takes them
    if so. A row gone reads as unchanged (its problem stands)."""
    deferred = obj.get_deferred_fields()
    names = [f.attname for f in obj._meta.concrete_fields if f.attname not in deferred]
    stored = type(obj)._base_manager.filter(pk=obj.pk).values(*names).first()
    if stored is None or all(stored[name] == getattr(obj, name) for name in names):
        return False
    obj.refresh_from_db(fields=names)
    return True


def raise_first(objs, problem_of, seals_of) -> None:
    """Every object read through its seals (``seals_of`` for all at once); the first whose
    problem stands after a re-read is raised as an integrity error."""
    objs = list(objs)
    if not objs:
        return
    seals = seals_of(objs)
    for obj in objs:
        found = settled(obj, problem_of(obj, seals), problem_of, seals_of)
        if found is not None:
            raise fail(obj, found)


def submission_seals_of(submissions) -> dict[str, BatchSeals]:
    submissions = list(submissions)
    return batch_seals((s.batch for s in submissions), (s.pk for s in submissions))


def run_seals_of(runs) -> dict[str, RunSeals]:
    return run_seals(r.pk for r in runs)


def score_seals_of(scores) -> dict[str, RunSeals]:
    scores = list(scores)
    return run_seals((s.run_id for s in scores), (s.pk for s in scores))


def decision_seals_of(decisions) -> dict[str, str | None]:
    return decision_seals(d.pk for d in decisions)


def union_seals_of(unions) -> dict[str, UnionSeal]:
    return union_seals(u.pk for u in unions)


def bundle_seals_of(runs) -> dict[str, BundleSeals]:
    return bundle_seals(r.pk for r in runs)


def verify_submissions(submissions: Iterable[Submission]) -> None:
    raise_first(submissions, submission_problem, submission_seals_of)


def verify_runs(runs: Iterable[ScoringRun]) -> None:
    raise_first(runs, run_problem, run_seals_of)


def verify_scores(scores: Iterable[SubmissionScore]) -> None:
    """Each score, and the submission it scores, through their seals."""
    scores = list(scores)
    raise_first(scores, score_problem, score_seals_of)
    verify_submissions({s.submission_id: s.submission for s in scores}.values())


def verify_decisions(decisions: Iterable[Decision]) -> None:
    raise_first(decisions, decision_problem, decision_seals_of)


def verify_union(union: Union, items: Iterable[UnionItem] | None = None) -> None:
    """The union and its items through their seal (``items``: every item of the union, as
    the caller read them; queried when not given). A union is written once, with its items:
    there is no later write for a read to straddle."""
    found = union_problem(union, union_seals([union.pk]), None if items is None else list(items))
    if found is not None:
        raise fail(union, found)


def verify_union_item(union: Union, item: UnionItem) -> None:
    """The union row and the item's block through their seals: what a decision rests on, at
    a cost independent of the union's size (a union sealed before blocks: all of it)."""
    seals = union_seals([union.pk])
    recorded = seals.get(str(union.pk))
    if recorded is None or recorded.blocks is None:
        found = union_problem(union, seals)
    else:
        found = union_item_problem(union, item, recorded)
    if found is not None:
        raise fail(union, found)


def verify_union_range(union: Union, rows: list[UnionItem], first: int, stop: int) -> int:
    """The union row and the blocks of items in positions ``first`` up to ``stop`` (block
    bounds; ``rows``: every item there, as the caller read them) through their seals; the
    union's item count, as recorded. A union sealed before blocks is verified whole."""
    seals = union_seals([union.pk])
    recorded = seals.get(str(union.pk))
    if recorded is None or recorded.blocks is None or recorded.count is None:
        found = union_problem(union, seals)
        if found is not None:
            raise fail(union, found)
        return union.items.count()
    found = union_range_problem(union, rows, first, stop, recorded)
    if found is not None:
        raise fail(union, found)
    return recorded.count


def union_range_problem(union: Union, rows: list[UnionItem], first: int, stop: int, recorded: UnionSeal):
    if recorded.row is None or recorded.blocks is None or recorded.count is None:
        return None
    actual = union_blocks_seal(union, list(recorded.blocks), recorded.count)
    if actual != recorded.row:
        return "its row differs from the seal the audit log recorded", recorded.row, actual
    blocks: dict[int, list[UnionItem]] = {block: [] for block in range(first // UNION_BLOCK, stop // UNION_BLOCK)}
    for row in rows:
        blocks[row.position // UNION_BLOCK].append(row)
    for block, items in blocks.items():
        if block >= len(recorded.blocks):
            if items:
                return (
                    "an item past the items the audit log recorded",
                    f"{recorded.count} items",
                    f"position {items[0].position}",
                )
            continue
        found = union_block_seal(block, items)
        if found != recorded.blocks[block]:
            return (
                f"the items of block {block} differ from the seal the audit log recorded",
                recorded.blocks[block],
                found,
            )
    return None


def verify_bundle_runs(runs: Iterable[BundleRun]) -> None:
    """Each bundle run through its seals (``bundle`` may be deferred: it is covered by
    ``bundle_sha256``)."""
    raise_first(runs, bundle_run_problem, bundle_seals_of)
