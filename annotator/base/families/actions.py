"""The action ledger (GTEA-style verb + nouns + frame boundaries)."""

from __future__ import annotations

from fractions import Fraction

from annotator.base.families.base import FamilyAdapter, dumps
from scoring import union_actions
from scoring.align import LEDGER_EVENT_CAPS


class ActionsAdapter(FamilyAdapter):
    family = "actions"
    max_events = LEDGER_EVENT_CAPS["actions"]
    label_format = "gtea"

    def task_parameters(self, packet) -> dict:
        return {"frame_count": packet.video.frame_count, "tolerance": packet.task_kind.schema.get("tolerance", 12)}

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        # json.dumps(indent=2) + newline, as published; the vocabulary is what the
        # verifier derives (the verbs and nouns that occur in the ground truth).
        gt = dumps(submission)
        actions = submission["actions"]
        fps = Fraction(packet.video.frame_rate_num, packet.video.frame_rate_den or 1)
        vocabulary = {
            "fps": int(fps) if fps.denominator == 1 else float(fps),
            "verbs": sorted({a["verb"] for a in actions}),
            "nouns": sorted({n for a in actions for n in a["nouns"]}),
        }
        return {"gt.json": gt, "vocabulary.json": dumps(vocabulary), "oracle.json": gt}

    def union(self, a_scored: list, b_scored: list, *, schema: dict, scorer) -> list:
        return union_actions(a_scored, b_scored, tolerance=schema.get("tolerance", 0))
