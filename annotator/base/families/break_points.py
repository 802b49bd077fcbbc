"""The break-point ledger (tennis: one event per break point, summary and shots)."""

from __future__ import annotations

import copy

from annotator.base.families.base import FamilyAdapter, ParametersInvalid, dumps
from scoring import tennis, union_break_points
from scoring import tennis_vocabulary as vocabulary
from scoring.align import LEDGER_EVENT_CAPS

# The fields whose values are player names, and the per-player score fields. The score
# fields keep the published verifier's key names (``medvedev_games`` …) for any match:
# the first player of ``parameters.players`` fills the ``medvedev_*`` fields, the second
# the ``de_minaur_*`` fields; the form labels them with the packet's names.
PLAYER_FIELDS = ("server", "terminal_player")
PLAYER_SLOTS = ("medvedev_", "de_minaur_")
MAX_NAME = 100

# What the browser shows differently for break points (``FamilyAdapter.ui``).
SECTIONS = [
    ["Score", list(tennis.IDENTITY_FIELDS)],
    ["Serve and outcome", ["first_serve_in", "outcome", "serve_direction", "rally_shots"]],
    ["Last shot", [f for f in tennis.SUMMARY_FIELDS if f.startswith("terminal_")]],
    ["Shots", ["shots"]],
    ["In the video", ["start_frame", "end_frame"]],
]
# "set 2 · 4–4 · 40–AD · Medvedev serves · BP 1 · saved · ace by Medvedev · 1 shot"
SUMMARY = [
    {"text": "set {set}"},
    {"text": "{medvedev_games}–{de_minaur_games}"},
    {"text": "{medvedev_points}–{de_minaur_points}"},
    {"text": "{server|surname} serves"},
    {"text": "BP {opportunity}"},
    {"text": "{outcome}", "if": "outcome"},
    {"text": "{terminal_result|words} by {terminal_player|surname}", "if": "terminal_result"},
    {"text": "{shots|count:shot}", "if": "shots"},
]
# SCORING.md section 2's consistency rules (warnings, not scorer rules): a point ending in
# a clean result has as many shot tokens as rally shots, one ending in an error one more
# (the missed stroke); an ace or unreturnable serve has one token; terminal_error is
# "none" exactly when the point does not end in an error.
POINT_ENDING = {
    "rule": "point_ending",
    "tokens": "shots",
    "count": "rally_shots",
    "result": "terminal_result",
    "error": "terminal_error",
    "clean": list(vocabulary.CLEAN_RESULTS),
    "single": list(vocabulary.SERVE_RESULTS),
    "no_error": vocabulary.NO_ERROR,
}


class BreakPointsAdapter(FamilyAdapter):
    family = "break_points"
    max_events = LEDGER_EVENT_CAPS["break_points"]
    label_format = "mcp-charting"
    asks = ("players",)

    def ui(self) -> dict:
        return {**super().ui(), "sections": SECTIONS, "summary": SUMMARY, "checks": [POINT_ENDING]}

    def check_parameters(self, parameters: dict) -> dict:
        """``{"players": ["First Player", "Second Player"]}`` or nothing (the kind's own
        players). Any other key is refused, so a typo never passes silently."""
        unknown = sorted(set(parameters) - {"players"})
        if unknown:
            raise ParametersInvalid(unknown[0], f"unknown parameter {unknown[0]!r} (this kind takes: players)")
        if "players" not in parameters:
            return {}
        players = parameters["players"]
        if not isinstance(players, list) or len(players) != 2:
            raise ParametersInvalid("players", "players must be a list of the two players' names")
        names = []
        for name in players:
            if not isinstance(name, str) or not name.strip():
                raise ParametersInvalid("players", "each player's name must be a non-empty string")
            if len(name.strip()) > MAX_NAME:
                raise ParametersInvalid("players", f"a player's name is at most {MAX_NAME} characters")
            names.append(" ".join(name.split()))
        if names[0].casefold() == names[1].casefold():
            raise ParametersInvalid("players", "the two players must have different names")
        return {"players": names}

    def check_project_parameters(self, params: dict) -> dict:
        """A project takes the same ``players`` as a packet."""
        try:
            return self.check_parameters(params)
        except ParametersInvalid as error:
            raise ValueError(f"{error.field}: {error}") from None

    def packet_schema(self, schema: dict, parameters: dict) -> dict:
        players = parameters.get("players")
        if not players:
            return schema
        schema = copy.deepcopy(schema)
        for field in schema["fields"]:
            if field["name"] in PLAYER_FIELDS:
                field["choices"] = list(players)
            for slot, player in zip(PLAYER_SLOTS, players, strict=True):
                if field["name"].startswith(slot):
                    field["label"] = f"{player}: {field['name'].removeprefix(slot)}"
        return schema

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        schema = self.packet_schema(packet.task_kind.schema, packet.parameters)
        gt = dumps(submission, newline=False)
        vocabulary = {
            f["name"]: f.get("choices") or f.get("subfields") for f in schema["fields"] if f.get("export", True)
        }
        return {"gt.json": gt, "vocabulary.json": dumps(vocabulary), "oracle.json": gt}

    def union(self, a_scored: list, b_scored: list, *, schema: dict, scorer) -> list:
        return union_break_points(a_scored, b_scored, version=scorer.version)
