"""The break-point ledger (tennis: one event per break point, summary and shots)."""

from __future__ import annotations

import copy

from annotator.base.families.base import FamilyAdapter, ParametersInvalid, dumps
from scoring import union_break_points

# The fields whose values are player names, and the per-player score fields. The score
# fields keep the published verifier's key names (``medvedev_games`` …) for any match:
# the first player of ``parameters.players`` fills the ``medvedev_*`` fields, the second
# the ``de_minaur_*`` fields; the form labels them with the packet's names.
PLAYER_FIELDS = ("server", "terminal_player")
PLAYER_SLOTS = ("medvedev_", "de_minaur_")
MAX_NAME = 100


class BreakPointsAdapter(FamilyAdapter):
    family = "break_points"
    label_format = "mcp-charting"

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
