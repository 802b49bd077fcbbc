"""Per-submission diagnostics agree with the scorer's counts and explain every miss."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction

import pytest

from annotator.reads.documents import version_events
from tests.factories import client_for
from tests.grading.conftest import EGOCENTRIC, TENNIS, scored, upload


def diagnostics_of(client, score):
    response = client.get(f"/api/scores/{score.pk}/diagnostics/")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_action_diagnostics_count_what_the_scorer_counts(gtea_version, maintainer):
    path = EGOCENTRIC / "calibration/rollouts/claude-opus-4.8.solution.json"
    subs = upload(gtea_version.packet, maintainer, {"claude": path.read_bytes()})
    score = scored(gtea_version, subs, maintainer)["claude"]
    body = diagnostics_of(client_for(maintainer), score)
    details = json.loads(bytes(score.reward_json))
    statuses = Counter(p["status"] for p in body["predictions"])
    assert len(body["matched"]) == statuses["matched"] == details["true_positives"] == 4
    assert statuses["false_positive"] + statuses["invalid"] == details["false_positives"]
    assert Counter(r["status"] for r in body["reference"])["missed"] == details["false_negatives"]
    for pair in body["matched"]:
        prediction, reference = body["predictions"][pair["pred_index"]], body["reference"][pair["ref_index"]]
        assert prediction["label"] == reference["label"]
        assert pair["start_delta"] == prediction["start_frame"] - reference["start_frame"]
        assert abs(pair["start_delta"]) <= 12 and abs(pair["end_delta"]) <= 12
    assert body["boundary_deltas"]["start"]["count"] == 4
    assert body["video"] == {"frame_count": 25692, "frame_rate": [24, 1]}


@pytest.mark.django_db
def test_an_action_near_miss_names_the_field_and_an_invalid_entry_the_check(gtea_version, maintainer):
    truth = version_events(gtea_version)
    first, second = truth[0], truth[1]
    wrong_noun = "cup" if "cup" not in second["nouns"] else "bowl"
    submission = {
        "actions": [
            {**first, "start_frame": first["start_frame"] + 3},
            {**second, "nouns": [wrong_noun]},
            {"verb": "juggle", "nouns": ["egg"], "start_frame": 100, "end_frame": 120},
        ]
    }
    subs = upload(gtea_version.packet, maintainer, {"handmade": json.dumps(submission).encode()})
    score = scored(gtea_version, subs, maintainer)["handmade"]
    body = diagnostics_of(client_for(maintainer), score)
    assert body["matched"][0] == {"pred_index": 0, "ref_index": 0, "start_delta": 3, "end_delta": 0}
    near = body["predictions"][1]
    assert near["status"] == "false_positive"
    assert near["note"] == "closest reference #2 (same verb and boundaries); differs in nouns; start +0, end +0 frames"
    assert body["reference"][1]["status"] == "missed" and "closest prediction #2" in body["reference"][1]["note"]
    invalid = body["predictions"][2]
    assert (invalid["status"], invalid["note"]) == ("invalid", "action 3 has a verb outside the vocabulary")
    assert invalid["start_frame"] == 100


@pytest.mark.django_db
def test_break_point_diagnostics_carry_the_credit_fields_and_shot_alignment(tennis_version, maintainer):
    path = TENNIS / "rollouts/codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json"
    subs = upload(tennis_version.packet, maintainer, {"full": path.read_bytes()})
    score = scored(tennis_version, subs, maintainer)["full"]
    body = diagnostics_of(client_for(maintainer), score)
    details = json.loads(bytes(score.reward_json))["details"]
    assert len(body["matched"]) == details["identity_matches_in_quality_alignment"] == 16
    (extra,) = [p for p in body["predictions"] if p["status"] == "false_positive"]
    assert extra["note"] in {
        "no break point with this identity in the ground truth",
        "identity already paired (a duplicate, or out of order)",
        "identity fields missing or mistyped",
    }
    credit = sum(Fraction(m["event_credit_exact"]) for m in body["matched"])
    assert round(float(2 * credit / (17 + 16)), 4) == score.reward == 0.3305
    published = {(p["prediction_index"], p["reference_index"]): p for p in details["matched_pairs"]}
    for pair in body["matched"]:
        golden = published[(pair["pred_index"], pair["ref_index"])]
        assert pair["event_credit"] == golden["event_credit"]
        assert pair["shot_atoms"] == golden["correct_shot_fields"]
        assert sum(row["atoms"] for row in pair["shot_alignment"]) == pair["shot_atoms"]
        wrong = {d["field"] for d in pair["field_differences"]}
        assert wrong.isdisjoint(golden["correct_summary_fields"])
        assert len(wrong) + len(golden["correct_summary_fields"]) == 9
