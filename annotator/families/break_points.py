"""The break-point ledger (tennis: one event per break point, summary and shots)."""

from __future__ import annotations

from annotator.families.base import FamilyAdapter, dumps
from scoring import union_break_points


class BreakPointsAdapter(FamilyAdapter):
    family = "break_points"

    def check_params(self, params: dict) -> dict:
        """``players``: the two players' names as the match shows them (two different,
        non-empty names); nothing else."""
        unknown = set(params) - {"players"}
        if unknown:
            raise ValueError(f"unknown parameter(s) for a break-point ledger: {', '.join(sorted(map(str, unknown)))}")
        if "players" not in params:
            return {}
        players = params["players"]
        if not isinstance(players, list) or len(players) != 2 or not all(isinstance(p, str) for p in players):
            raise ValueError("players: give exactly two names")
        names = [p.strip() for p in players]
        if not all(names) or any(len(n) > 100 for n in names):
            raise ValueError("players: each name must be 1 to 100 characters")
        if names[0].casefold() == names[1].casefold():
            raise ValueError("players: the two names must differ")
        return {"players": names}

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        schema = packet.task_kind.schema
        gt = dumps(submission, newline=False)
        vocabulary = {
            f["name"]: f.get("choices") or f.get("subfields") for f in schema["fields"] if f.get("export", True)
        }
        return {"gt.json": gt, "vocabulary.json": dumps(vocabulary), "oracle.json": gt}

    def union(self, a_scored: list, b_scored: list, *, schema: dict, scorer) -> list:
        return union_break_points(a_scored, b_scored, version=scorer.version)
