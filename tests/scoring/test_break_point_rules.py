"""Hand-computed cases of the break-point scorers (SCORING.md section 2)."""

from __future__ import annotations

import copy
import json

import pytest

from scoring import align_break_points, score_submission

E1 = {
    "set": 1,
    "medvedev_games": 1,
    "de_minaur_games": 1,
    "medvedev_points": "30",
    "de_minaur_points": "40",
    "server": "Daniil Medvedev",
    "opportunity": 1,
    "outcome": "saved",
    "first_serve_in": True,
    "serve_direction": "wide",
    "rally_shots": 3,
    "terminal_player": "Alex De Minaur",
    "terminal_stroke": "backhand_groundstroke",
    "terminal_court_position": "baseline",
    "terminal_result": "winner",
    "terminal_error": "none",
    "shots": [
        {"stroke": "serve", "direction": "wide"},
        {"stroke": "forehand_groundstroke", "direction": "middle"},
        {"stroke": "backhand_groundstroke", "direction": "receiver_backhand"},
    ],
}
E2 = {**copy.deepcopy(E1), "set": 2, "opportunity": 2, "outcome": "converted"}
GT = {"break_points": [E1, E2]}


def event(base=E1, **changes) -> dict:
    return {**copy.deepcopy(base), **changes}


def score(events, version="v1", ground_truth=GT):
    payload = json.dumps({"break_points": events}).encode()
    return score_submission(f"hierarchical-bottleneck-{version}", ground_truth, payload)


def test_the_oracle_scores_one_and_every_event_is_exact():
    result = score([E1, E2])
    assert result.reward == 1.0
    assert result.details["fully_correct_events"] == 2
    assert result.details["matched_pairs"][0]["event_credit"] == 1.0


def test_identity_types_are_compared_exactly():
    result = score([event(set=True), event(E2, opportunity=2.0)])
    assert result.details["invalid_identity_events"] == 2
    assert result.reward == 0.0


def test_a_summary_value_of_the_wrong_type_earns_nothing():
    result = score([event(first_serve_in=1)])
    assert "first_serve_in" not in result.details["matched_pairs"][0]["correct_summary_fields"]
    assert result.details["summary_fields_correct"] == 8


def test_event_credit_is_the_smaller_of_summary_and_shot_accuracy():
    no_shots = score([event(shots=[])])
    assert no_shots.details["matched_pairs"][0]["event_credit"] == 0.0
    wrong_summary = {field: "x" for field in ("outcome", "serve_direction", "terminal_player", "terminal_stroke")}
    wrong_summary |= {"terminal_court_position": "x", "terminal_result": "x", "terminal_error": "x"}
    two_of_nine = score([event(**wrong_summary)])
    assert two_of_nine.details["matched_pairs"][0]["event_credit"] == round(2 / 9, 4)
    # reward = 2 * credit / (n_predicted + n_reference) = 2 * (2/9) / 3
    assert two_of_nine.reward == round(4 / 27, 4)


def test_shot_accuracy_divides_by_the_longer_side():
    extra = event(shots=E1["shots"] + [{"stroke": "overhead", "direction": "middle"}])
    pair = score([extra]).details["matched_pairs"][0]
    assert (pair["correct_shot_fields"], pair["shot_denominator"], pair["shot_accuracy"]) == (6, 8, 0.75)


def test_v2_scores_token_zero_on_its_direction_only():
    serve_only = event(shots=[{"stroke": "serve", "direction": "wide"}])
    v1 = score([serve_only]).details["matched_pairs"][0]
    v2 = score([serve_only], "v2").details["matched_pairs"][0]
    assert (v1["correct_shot_fields"], v1["shot_denominator"]) == (2, 6)
    assert (v2["correct_shot_fields"], v2["shot_denominator"]) == (1, 5)
    wrong_serve_stroke = event(shots=[{"stroke": "forehand_groundstroke", "direction": "wide"}] + E1["shots"][1:])
    assert score([wrong_serve_stroke, E2], "v2").reward == 1.0
    assert score([wrong_serve_stroke, E2], "v1").reward < 1.0


def test_identity_counters_follow_their_definitions():
    result = score([E2, E1, event(E1), event(set=9)])
    details = result.details
    assert details["identity_matches_ordered"] == 1
    assert details["identity_matches_unordered"] == 2
    assert details["out_of_order_identity_matches"] == 1
    assert details["duplicate_identity_events"] == 1
    assert details["false_identity_events"] == 1
    assert details["reward_denominator"] == 6


def test_equal_alignments_prefer_the_lexicographically_smaller_pairs():
    pairs = align_break_points([E1, event(E1)], [E1])
    assert [(p.pred_index, p.ref_index) for p in pairs] == [(0, 0)]
    better_second = align_break_points([event(shots=[]), E1], [E1])
    assert [(p.pred_index, p.ref_index) for p in better_second] == [(1, 0)]


def test_a_shots_value_that_is_not_a_list_is_one_missing_token():
    result = score([event(shots="serve")])
    details = result.details
    assert details["malformed_shot_sequences"] == 1
    assert details["matched_pairs"][0]["predicted_shots"] == 1
    assert details["matched_pairs"][0]["correct_shot_fields"] == 0


@pytest.mark.parametrize(
    ("payload", "reason", "root_schema_issue"),
    [
        (b"[]", "unreadable solution.json: solution root is not an object", True),
        (b"{}", "unreadable solution.json: solution must contain the break_points key", True),
        (b'{"break_points": {}}', "unreadable solution.json: break_points is not a list", False),
        (b'{"break_points": [], "extra": 1}', "ok", True),
        (b"nope", "unreadable solution.json: Expecting value: line 1 column 1 (char 0)", False),
    ],
)
def test_root_problems_score_zero_with_the_published_reason(payload, reason, root_schema_issue):
    result = score_submission("hierarchical-bottleneck-v1", GT, payload)
    assert (result.reward, result.reason, result.details["root_schema_issue"]) == (0.0, reason, root_schema_issue)


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        ([{}] * 257, "break_points exceeds 256 events"),
        ([{"shots": [{}] * 513}], "one shots array exceeds 512 entries"),
        ([{"shots": [{}] * 512}] * 8 + [{"shots": [{}]}], "all shots arrays exceed 4096 entries"),
    ],
)
def test_caps_fail_the_whole_file(events, reason):
    payload = json.dumps({"break_points": events, "extra": True}).encode()
    result = score_submission("hierarchical-bottleneck-v1", GT, payload)
    assert result.reason == f"unreadable solution.json: {reason}"
    assert result.details["n_predicted"] == 0
    assert result.details["root_schema_issue"] is True


def test_events_at_the_caps_are_scored():
    events = [event(shots=[{"stroke": "serve", "direction": "wide"}] * 16) for _ in range(256)]
    result = score(events)
    assert result.reason == "ok"
    assert result.details["n_predicted"] == 256


def test_reward_json_has_no_trailing_newline_and_reward_txt_has_one():
    result = score([E1, E2])
    assert result.reward_json.endswith(b"}")
    assert result.reward_txt == b"1.0\n"
    assert json.loads(result.reward_json)["details"] == result.details
    assert result.details_json is None
