"""The break-point ledger (tennis: one event per break point, summary and shots)."""

from __future__ import annotations

from annotator.families.base import FamilyAdapter, dumps
from scoring import union_break_points


class BreakPointsAdapter(FamilyAdapter):
    family = "break_points"

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        schema = packet.task_kind.schema
        gt = dumps(submission, newline=False)
        vocabulary = {
            f["name"]: f.get("choices") or f.get("subfields") for f in schema["fields"] if f.get("export", True)
        }
        return {"gt.json": gt, "vocabulary.json": dumps(vocabulary), "oracle.json": gt}

    def union(self, a_scored: list, b_scored: list, *, schema: dict, scorer) -> list:
        return union_break_points(a_scored, b_scored, version=scorer.version)
