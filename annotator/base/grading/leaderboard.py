"""Leaderboard rows of one (ground-truth version, scorer): shaping, sorting, CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from scoring import get_scorer

BASE_COLUMNS = ("rank", "kind", "label", "reward", "reason", "submission", "sha256", "result", "run", "scored_at")


class BadSort(ValueError):
    pass


def columns(scorer_id: str) -> tuple[str, ...]:
    """The base columns, then the scorer's key metrics (``Scorer.key_metrics``)."""
    return BASE_COLUMNS + get_scorer(scorer_id).key_metrics


def make_row(scorer_id: str, *, kind: str, label: str, reward, reason: str, details: dict | None, **extra) -> dict:
    details = details or {}
    row = {"rank": None, "kind": kind, "label": label, "reward": reward, "reason": reason}
    row.update({key: extra.get(key) for key in ("submission", "sha256", "result", "run", "scored_at")})
    row.update({key: details.get(key) for key in get_scorer(scorer_id).key_metrics})
    return row


def reference_rows(scorer_id: str, anchors: Sequence[dict]) -> list[dict]:
    """A version's calibration anchors as unranked ``reference`` rows (``anchor/<name>``),
    listed next to the ranked submissions; anchors without a reward are left out."""
    return [
        make_row(scorer_id, kind="reference", label=f"anchor/{a['name']}", reward=a["reward"],
                 reason=a.get("description", ""), details=None)
        for a in anchors
        if a.get("reward") is not None
    ]  # fmt: skip


def rank(rows: list[dict]) -> list[dict]:
    """Competition ranking by reward (1, 2, 2, 4); rows without a reward get none."""
    rewards = sorted((r["reward"] for r in rows if r["reward"] is not None), reverse=True)
    for row in rows:
        row["rank"] = None if row["reward"] is None else 1 + sum(1 for value in rewards if value > row["reward"])
    return rows


def sort_rows(rows: Sequence[dict], sort: str | None, scorer_id: str) -> list[dict]:
    """``sort`` is a column name, ``-`` in front for descending (default ``-reward``).
    Missing values go last either way; ties by label, then result id."""
    sort = sort or "-reward"
    descending = sort.startswith("-")
    column = sort.lstrip("-")
    if column not in columns(scorer_id):
        raise BadSort(f"cannot sort by {column!r}; columns: {', '.join(columns(scorer_id))}")
    tiebreak = sorted(rows, key=lambda r: (str(r["label"]), r["result"] or 0))
    present = [r for r in tiebreak if r[column] is not None]
    missing = [r for r in tiebreak if r[column] is None]
    present.sort(key=lambda r: r[column], reverse=descending)
    return present + missing


# OWASP "CSV injection": a spreadsheet treats a cell starting with one of these as a
# formula (``=HYPERLINK(...)``, ``@SUM(...)``, DDE payloads).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value):
    """A text cell that a spreadsheet would run as a formula, prefixed with ``'`` so it
    is shown as text. Numbers stay numbers (``-0.5`` is written as ``-0.5``); text that
    merely looks like a number (``"-1"``) is text and gets the quote too."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def rows_csv(rows: Sequence[dict], scorer_id: str) -> str:
    """The rows as CSV; every text cell passes :func:`neutralise_cell`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns(scorer_id), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else neutralise_cell(row[key]) for key in columns(scorer_id)})
    return buffer.getvalue()
