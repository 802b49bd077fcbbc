"""The published GTEA Gaze+ label format: ``<verb><noun,noun,...> (start-end)`` per line."""

from __future__ import annotations

import re

LINE = re.compile(r"^<(?P<verb>[^<>]+)><(?P<nouns>[^<>]+)>\s*\((?P<start>\d+)-(?P<end>\d+)\)\s*$")
# The published task folds the one plural noun into its singular form.
NOUN_FOLDS = {"eggs": "egg"}


class LabelFormatError(ValueError):
    def __init__(self, line_number: int, line: str, reason: str):
        super().__init__(f"line {line_number}: {reason}: {line!r}")
        self.line_number = line_number
        self.reason = reason


def parse_gtea_line(number: int, raw: str) -> dict | None:
    """One line as an action event; ``None`` for a blank line; ``LabelFormatError`` otherwise."""
    line = raw.strip()
    if not line:
        return None
    match = LINE.match(line)
    if match is None:
        raise LabelFormatError(number, raw, "expected <verb><noun,...> (start-end)")
    nouns = sorted({NOUN_FOLDS.get(n.strip(), n.strip()) for n in match["nouns"].split(",") if n.strip()})
    start, end = int(match["start"]), int(match["end"])
    if start >= end:
        raise LabelFormatError(number, raw, "start must be before end")
    return {"verb": match["verb"].strip(), "nouns": nouns, "start_frame": start, "end_frame": end}


def sort_actions(actions: list[dict]) -> list[dict]:
    """The published ground truth's order: start, verb, nouns, end."""
    return sorted(actions, key=lambda a: (a["start_frame"], a["verb"], a["nouns"], a["end_frame"]))


def parse_gtea_labels(text: str) -> list[dict]:
    """Parse a label file into action events, sorted as the published ground truth is
    (start, verb, nouns, end). Blank lines are skipped; anything else malformed raises."""
    actions = [parse_gtea_line(number, raw) for number, raw in enumerate(text.splitlines(), start=1)]
    return sort_actions([a for a in actions if a is not None])
