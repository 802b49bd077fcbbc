"""Leaderboard rows of one (ground-truth version, scorer): shaping, sorting, CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

KEY_DIAGNOSTICS = {
    "actions": (
        "precision", "recall", "true_positives", "false_positives", "false_negatives", "predicted_actions",
        "invalid_predicted_actions", "verb_and_boundary_matches", "boundary_only_matches",
    ),
    "break_points": (
        "n_predicted", "identity_matches_in_quality_alignment", "false_identity_events", "duplicate_identity_events",
        "exact_event_matches_ordered", "summary_accuracy", "shot_accuracy", "hierarchical_precision",
        "hierarchical_recall",
    ),
    "moments": ("raw_quality", "r1_at_0.5", "r1_at_0.7", "r1_at_0.9", "mean_iou", "missing", "invalid"),
}  # fmt: skip
BASE_COLUMNS = ("rank", "kind", "label", "reward", "reason", "submission", "sha256", "result", "run", "scored_at")


class BadSort(ValueError):
    pass


def columns(family: str) -> tuple[str, ...]:
    return BASE_COLUMNS + KEY_DIAGNOSTICS[family]


def make_row(family: str, *, kind: str, label: str, reward, reason: str, details: dict | None, **extra) -> dict:
    details = details or {}
    row = {"rank": None, "kind": kind, "label": label, "reward": reward, "reason": reason}
    row.update({key: extra.get(key) for key in ("submission", "sha256", "result", "run", "scored_at")})
    row.update({key: details.get(key) for key in KEY_DIAGNOSTICS[family]})
    return row


def reference_rows(family: str, anchors: Sequence[dict]) -> list[dict]:
    """A version's calibration anchors as unranked ``reference`` rows (``anchor/<name>``),
    listed next to the ranked submissions; anchors without a reward are left out."""
    return [
        make_row(family, kind="reference", label=f"anchor/{a['name']}", reward=a["reward"],
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


def sort_rows(rows: Sequence[dict], sort: str | None, family: str) -> list[dict]:
    """``sort`` is a column name, ``-`` in front for descending (default ``-reward``).
    Missing values go last either way; ties by label, then result id."""
    sort = sort or "-reward"
    descending = sort.startswith("-")
    column = sort.lstrip("-")
    if column not in columns(family):
        raise BadSort(f"cannot sort by {column!r}; columns: {', '.join(columns(family))}")
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


def rows_csv(rows: Sequence[dict], family: str) -> str:
    """The rows as CSV; every text cell passes :func:`neutralise_cell`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns(family), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else neutralise_cell(row[key]) for key in columns(family)})
    return buffer.getvalue()
