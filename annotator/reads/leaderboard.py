"""The leaderboard of one (ground-truth version, scorer), a page at a time.

Its rows are the newest final score of every submission (selected, sorted and ranked by
the database), plus the human ceiling (each frozen annotator ledger scored like an agent:
``reads.grading.human_rows``, at most two rows) merged into the same order.

* Order: ``sort`` names a column (``-`` in front for descending, default ``-reward``);
  rows without a value go last either way; ties by label (code-point order, the same in
  the database and here), then result id. ``rank`` sorts as reward in the other direction.
* Pages: keyset (a cursor holds the sort key of the last row shown), so a page costs the
  same whatever its position and the number of rows, and never holds more than one page
  of scores in Python. The cursor names its sort: a cursor of another sort is refused.
* Rank: competition ranking by reward (1, 2, 2, 4) over every row, computed by the
  database (``RANK() OVER (ORDER BY reward DESC)``) for the rows of the page, plus the
  human rows above each.
* Each score of a page is read through its seal (``verify_scores``), as before.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Case, Count, Exists, F, FloatField, OuterRef, Q, QuerySet, TextField, Value, When
from django.db.models.expressions import Window
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Collate, Concat, Rank, RowNumber

from annotator.base.errors import InvalidInput
from annotator.base.grading import leaderboard as board
from annotator.models import BundleRun, GroundTruthVersion, SubmissionScore
from annotator.reads.sealed_rows import verify_bundle_runs, verify_scores

PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
TEXT_COLUMNS = ("label", "sha256", "reason", "kind")


@dataclass(frozen=True)
class Order:
    sort: str  # as asked, e.g. "-reward"
    column: str
    descending: bool  # of the column as stored: ``rank`` ascending is reward descending

    @property
    def field(self) -> str:
        return "reward" if self.column == "rank" else self.column


def parse_order(sort: str | None, scorer_id: str) -> Order:
    sort = sort or "-reward"
    column = sort.lstrip("-")
    if column not in board.columns(scorer_id):
        raise InvalidInput(f"cannot sort by {column!r}; columns: {', '.join(board.columns(scorer_id))}", field="sort")
    descending = sort.startswith("-")
    return Order(sort, column, (not descending) if column == "rank" else descending)


def _text(expression):
    """A text expression compared by code point, as Python compares strings."""
    return Collate(expression, "C" if connection.vendor == "postgresql" else "BINARY")


def _column_expression(column: str, scorer_id: str):
    kind = Case(
        When(
            Exists(BundleRun.objects.filter(submission_id=OuterRef("submission_id"), status=BundleRun.Status.DONE)),
            then=Value("bundle"),
        ),
        default=Value("agent"),
        output_field=TextField(),
    )
    reason = Case(
        When(
            status=SubmissionScore.Status.ERROR,
            then=Concat(Value("scorer error: "), F("error"), output_field=TextField()),
        ),
        default=F("reason"),
        output_field=TextField(),
    )
    plain = {
        "reward": F("reward"),
        "submission": F("submission_id"),
        "result": F("id"),
        "run": F("run_id"),
        "scored_at": F("scored_at"),
        "label": _text(F("submission__label")),
        "sha256": _text(F("submission__sha256")),
        "reason": _text(reason),
        "kind": _text(kind),
    }
    if column in plain:
        return plain[column]
    return Cast(KeyTextTransform(column, "details"), FloatField())  # a key metric


def board_scores(version: GroundTruthVersion, scorer_id: str) -> QuerySet[SubmissionScore]:
    """The newest final score of every submission against (version, scorer), unordered: each
    final score that no final score of the same submission follows (by run, then id), picked
    by the database in one pass (an anti-join: ``NOT EXISTS`` a newer one), never a lookup
    per row, and without re-reading the picked rows by id."""
    final = SubmissionScore.objects.filter(version=version, scorer_id=scorer_id).exclude(
        status=SubmissionScore.Status.PENDING
    )
    newer = final.filter(submission_id=OuterRef("submission_id")).filter(
        Q(run_id__gt=OuterRef("run_id")) | Q(run_id=OuterRef("run_id"), id__gt=OuterRef("id"))
    )
    return final.filter(~Exists(newer))


def ordered(scores: QuerySet[SubmissionScore], order: Order, scorer_id: str) -> QuerySet[SubmissionScore]:
    key = F("_key").desc(nulls_last=True) if order.descending else F("_key").asc(nulls_last=True)
    annotated = scores.annotate(_key=_column_expression(order.field, scorer_id), _label=_text(F("submission__label")))
    return annotated.order_by(key, "_label", "id")


# ----------------------------------------------------------------------------- cursor


def encode_cursor(order: Order, key: tuple) -> str:
    value = key[1].isoformat() if isinstance(key[1], datetime) else key[1]
    raw = json.dumps({"sort": order.sort, "key": [key[0], value, key[2], key[3]]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, order: Order) -> tuple | None:
    if not cursor:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        missing, value, label, result = data["key"]
        ok = data["sort"] == order.sort and isinstance(missing, bool) and isinstance(label, str)
        ok = ok and isinstance(result, int) and not isinstance(result, bool)
        if order.field == "scored_at" and value is not None:
            value = datetime.fromisoformat(value)
    except (ValueError, TypeError, KeyError, binascii.Error):
        ok = False
    if not ok:
        raise InvalidInput(
            "cursor is not one this leaderboard gave for this sort; start again without it", field="cursor"
        )
    return (missing, value, label, result)


def _after(key: tuple, order: Order) -> Q:
    """The rows after ``key`` in ``order`` (see the module docstring)."""
    missing, value, label, result = key
    tie = Q(_label__gt=label) | Q(_label=label, id__gt=result)
    if missing:
        return Q(_key__isnull=True) & tie
    beyond = Q(_key__lt=value) if order.descending else Q(_key__gt=value)
    return Q(_key__isnull=True) | beyond | (Q(_key=value) & tie)


def row_key(row: dict, order: Order) -> tuple:
    value = row[order.field]
    if order.field == "scored_at" and isinstance(value, str):
        value = datetime.fromisoformat(value)
    return (value is None, value, str(row["label"]), row["result"] or 0)


def _compare(a: tuple, b: tuple, order: Order) -> int:
    if a[0] != b[0]:
        return -1 if not a[0] else 1
    if not a[0] and a[1] != b[1]:
        less = a[1] < b[1]
        return (1 if less else -1) if order.descending else (-1 if less else 1)
    return (a[2:] > b[2:]) - (a[2:] < b[2:])


# ------------------------------------------------------------------------------- page


@dataclass
class Page:
    rows: list[dict]
    next_cursor: str | None
    count: int  # agent rows in all (every page, not this one), from the rank query


def page(version: GroundTruthVersion, scorer_id: str, humans: list[dict], *, sort=None, cursor=None, size=PAGE_SIZE):
    """One page of the leaderboard (``humans``: the human rows, ranked here)."""
    order = parse_order(sort, scorer_id)
    after = decode_cursor(cursor, order)
    scores_qs = board_scores(version, scorer_id)
    rows_qs = ordered(scores_qs, order, scorer_id)
    every_human, humans = humans, [dict(h) for h in humans]
    if after is not None:
        rows_qs = rows_qs.filter(_after(after, order))
        humans = [h for h in humans if _compare(row_key(h, order), after, order) > 0]
    scores = list(rows_qs.select_related("submission").defer("submission__content")[: size + 1])
    verify_scores(scores)  # every reward shown is read through its seal
    rows = [_agent_row(scorer_id, s) for s in scores]
    _add_bundle_runs(rows)
    by_key = functools.cmp_to_key(lambda a, b: _compare(row_key(a, order), row_key(b, order), order))
    merged = sorted(rows + humans, key=by_key)
    shown = merged[:size]
    total = _rank(scores_qs, shown, [h["reward"] for h in every_human if h["reward"] is not None])
    next_cursor = encode_cursor(order, row_key(shown[-1], order)) if len(merged) > size and shown else None
    return Page(shown, next_cursor, total)


def count(version: GroundTruthVersion, scorer_id: str) -> int:
    return board_scores(version, scorer_id).count()


def _agent_row(scorer_id: str, s: SubmissionScore) -> dict:
    return board.make_row(
        scorer_id,
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


def _add_bundle_runs(rows: list[dict]) -> None:
    runs = bundle_summaries(r["submission"] for r in rows)
    for row in rows:
        if row["submission"] in runs:
            row.update(kind="bundle", **runs[row["submission"]])


def bundle_summaries(submission_ids) -> dict[int, dict]:
    """Stage timings and outcome of the bundle runs behind submissions (leaderboard), each
    run read through its seals (a row's kind, reference flag and outcome changed by SQL are
    an integrity error, never shown); only a run that is done names its submission."""
    runs = list(BundleRun.objects.filter(submission_id__in=list(submission_ids)).defer("bundle"))
    verify_bundle_runs(runs)
    runs = [r for r in runs if r.status == BundleRun.Status.DONE]
    return {
        r.submission_id: {
            "bundle_run": r.pk,
            "reference": r.reference,
            "stage_seconds": {s["name"]: s["seconds"] for s in r.stages},
            "outcome": r.outcome,
        }
        for r in runs
    }


def _rank(scores: QuerySet[SubmissionScore], rows: list[dict], human_rewards: list[float]) -> int:
    """Competition rank by reward over every agent row and every human row (``human_rewards``),
    for ``rows``: an agent's rank by the database, plus the humans above it; a human's, one
    plus the agents and the other humans above it. Returns the number of agent rows in all."""
    shown_humans = [r["reward"] for r in rows if r["kind"] == "human" and r["reward"] is not None]
    agent_ranks, total = _database_ranks(
        scores, [r["result"] for r in rows if r["kind"] != "human" and r["reward"] is not None]
    )
    above = _agents_above(scores, shown_humans)
    for row in rows:
        reward = row["reward"]
        humans_above = sum(1 for h in human_rewards if h > reward) if reward is not None else 0
        if reward is None:
            row["rank"] = None
        elif row["kind"] == "human":
            row["rank"] = 1 + above[reward] + humans_above
        else:
            row["rank"] = agent_ranks[row["result"]] + humans_above
    return total


def _database_ranks(scores: QuerySet[SubmissionScore], ids: list[int]) -> tuple[dict[int, int], int]:
    """``RANK() OVER (ORDER BY reward DESC NULLS LAST)`` over every row of ``scores``, for
    ``ids`` (a row without a reward ranks after all others, so the ranks of the rows with
    one are theirs among those alone), and the number of rows of ``scores``: one pass over
    the board. The first row by rank always comes back, to carry the count."""
    ranked = scores.annotate(
        board_rank=Window(Rank(), order_by=F("reward").desc(nulls_last=True)),
        board_first=Window(RowNumber(), order_by=[F("reward").desc(nulls_last=True), F("id").asc()]),
        board_total=Window(Count("id")),
    )
    sql, params = ranked.values("id", "board_rank", "board_first", "board_total").query.sql_with_params()
    marks = ", ".join(["%s"] * len(ids)) or "NULL"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ranked.id, ranked.board_rank, ranked.board_total FROM "
            f"({sql}) ranked WHERE ranked.id IN ({marks}) OR ranked.board_first = 1",
            [*params, *ids],
        )
        found = cursor.fetchall()
    return {pk: rank for pk, rank, _ in found}, (found[0][2] if found else 0)


def _agents_above(scores: QuerySet[SubmissionScore], rewards: list[float]) -> dict[float, int]:
    """How many agent rows have a reward above each of ``rewards`` (one query)."""
    if not rewards:
        return {}
    counts = scores.aggregate(**{f"above_{i}": Count("id", filter=Q(reward__gt=r)) for i, r in enumerate(rewards)})
    return {r: counts[f"above_{i}"] for i, r in enumerate(rewards)}


def every_row(version: GroundTruthVersion, scorer_id: str, humans: list[dict], *, sort=None, cursor=None):
    """Every row in order from ``cursor``, a page at a time (the CSV and JSON downloads)."""
    while True:
        found = page(version, scorer_id, humans, sort=sort, cursor=cursor, size=MAX_PAGE_SIZE)
        yield from found.rows
        if found.next_cursor is None:
            return
        cursor = found.next_cursor
