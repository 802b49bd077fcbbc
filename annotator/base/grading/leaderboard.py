"""Leaderboard rows of one (ground-truth version, scorer): shaping, sorting, CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence

from scoring import get_scorer

BASE_COLUMNS = ("rank", "kind", "label", "reward", "reason", "submission", "sha256", "result", "run", "scored_at")


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


def csv_lines(rows: Iterable[dict], scorer_id: str) -> Iterator[str]:
    """The rows as CSV, a line at a time; every text cell passes :func:`neutralise_cell`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns(scorer_id), extrasaction="ignore", lineterminator="\n")

    def taken() -> str:
        line = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return line

    writer.writeheader()
    yield taken()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else neutralise_cell(row[key]) for key in columns(scorer_id)})
        yield taken()


def rows_csv(rows: Iterable[dict], scorer_id: str) -> str:
    """The rows as one CSV text (:func:`csv_lines`)."""
    return "".join(csv_lines(rows, scorer_id))


def json_chunks(head: dict, rows: Iterable[dict]) -> Iterator[str]:
    """``head`` with ``rows`` (the ranked rows) and ``references`` (the rows of kind
    ``reference``, which come last), as one JSON document written a row at a time."""
    yield json.dumps(head)[:-1] + ', "rows": ['
    key, first = "rows", True
    for row in rows:
        if key == "rows" and row.get("kind") == "reference":
            yield '], "references": ['
            key, first = "references", True
        yield ("" if first else ", ") + json.dumps(row)
        first = False
    yield "]" if key == "references" else '], "references": []'
    yield "}\n"
