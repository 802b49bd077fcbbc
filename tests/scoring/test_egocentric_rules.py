"""Hand-computed cases of the action-ledger scorer (SCORING.md section 1)."""

from __future__ import annotations

import json

import pytest

from scoring import ParameterError, score_submission

GT = {
    "actions": [
        {"verb": "take", "nouns": ["cup"], "start_frame": 12, "end_frame": 30},
        {"verb": "put", "nouns": ["cup", "plate"], "start_frame": 40, "end_frame": 60},
        {"verb": "open", "nouns": ["fridge"], "start_frame": 100, "end_frame": 130},
    ]
}


def action(verb="take", nouns=("cup",), start=10, end=30) -> dict:
    return {"verb": verb, "nouns": list(nouns), "start_frame": start, "end_frame": end}


def score(actions, version="v2", **params):
    params.setdefault("frame_count", 200)
    payload = json.dumps({"actions": actions}).encode()
    return score_submission(f"egocentric-f1-{version}", GT, payload, **params)


def test_entry_checks_report_the_first_failure_of_each_entry_in_order():
    entries = [
        "not an object",
        {"verb": "take", "nouns": ["cup"]},
        action(verb="jump"),
        action(nouns=()),
        action(nouns=("spoon",)),
        action(nouns=("cup", "cup")),
        {**action(), "start_frame": 10.0},
        {**action(), "end_frame": True},
        action(start=150, end=200),
        action(start=50, end=60),
        action(start=40, end=45),
    ]
    result = score(entries)
    assert result.reason == "; ".join(
        [
            "action 1 must be an object",
            "action 2 is missing required fields",
            "action 3 has a verb outside the vocabulary",
            "action 4 must list at least one noun",
            "action 5 has a noun outside the vocabulary",
            "action 6 repeats a noun",
            "action 7 has non-integer frame numbers",
            "action 8 has non-integer frame numbers",
            "action 9 has frame numbers outside the video",
            "action 11 is not in chronological order",
        ]
    )
    assert result.details["predicted_actions"] == 11
    assert result.details["valid_predicted_actions"] == 1
    assert result.details["invalid_predicted_actions"] == 10


def test_only_the_first_ten_messages_enter_the_reason():
    result = score(["x"] * 12)
    assert result.reason.count("must be an object") == 10
    assert "action 11" not in result.reason


def test_an_invalid_entry_does_not_move_the_order_marker():
    entries = [action(start=50, end=60), action(nouns=("spoon",), start=90, end=95), action(start=60, end=70)]
    result = score(entries)
    assert result.details["valid_predicted_actions"] == 2


def test_an_unhashable_verb_aborts_the_whole_file():
    result = score([action(), {**action(), "verb": ["take"]}])
    assert result.reward == 0.0
    assert result.details["predicted_actions"] == 0
    assert result.details["true_positives"] == 0
    assert result.reason == "invalid solution: unhashable type: 'list'"


def test_an_unhashable_noun_aborts_only_when_the_lookup_reaches_it():
    reached = score([{**action(), "nouns": ["cup", {"a": 1}]}])
    assert reached.reason == "invalid solution: unhashable type: 'dict'"
    not_reached = score([{**action(), "nouns": ["spoon", {"a": 1}]}])
    assert not_reached.reason == "action 1 has a noun outside the vocabulary"
    assert not_reached.details["predicted_actions"] == 1


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"[]", "invalid solution: solution must be an object containing actions"),
        (b'{"other": []}', "invalid solution: solution must be an object containing actions"),
        (b'{"actions": {}}', "invalid solution: actions must be a list"),
        (b"\xff\xfe", "invalid solution: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
        (b"{", "invalid solution: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ],
)
def test_whole_file_rejections_score_zero_with_the_published_reason(payload: bytes, reason: str):
    result = score_submission("egocentric-f1-v2", GT, payload, frame_count=200)
    assert result.reward == 0.0
    assert result.reason == reason
    assert result.details["predicted_actions"] == 0


def test_more_than_2000_entries_are_rejected():
    result = score([action()] * 2001)
    assert result.reason == "invalid solution: actions exceeds the maximum of 2000"
    assert result.details["predicted_actions"] == 0


def test_more_than_two_million_bytes_are_rejected_before_parsing():
    payload = b'{"actions": []}' + b" " * 2_000_000
    result = score_submission("egocentric-f1-v2", GT, payload, frame_count=200)
    assert result.reason == "invalid solution: solution exceeds 2000000 bytes"


@pytest.mark.parametrize(("shift", "matches"), [(12, 3), (-12, 3), (13, 0), (-13, 0)])
def test_the_boundary_tolerance_is_inclusive(shift: int, matches: int):
    entries = [
        {**a, "start_frame": a["start_frame"] + shift, "end_frame": a["end_frame"] + shift} for a in GT["actions"]
    ]
    assert score(entries).details["true_positives"] == matches


def test_a_custom_tolerance_is_honoured_and_reported():
    entries = [action(start=15, end=35)]
    assert score(entries, tolerance=4).details["true_positives"] == 0
    result = score(entries, tolerance=5)
    assert result.details["true_positives"] == 1
    assert result.details["frame_tolerance"] == 5


def test_noun_order_is_ignored():
    assert score([action("put", ("plate", "cup"), 40, 60)]).details["true_positives"] == 1


def test_v1_counts_only_an_order_preserving_alignment_and_v2_a_maximum_matching():
    ground_truth = {"actions": [action("take", ("cup",), 10, 30), action("put", ("cup", "plate"), 12, 28)]}
    entries = [action("put", ("cup", "plate"), 11, 29), action("take", ("cup",), 11, 29)]
    payload = json.dumps({"actions": entries}).encode()
    v2 = score_submission("egocentric-f1-v2", ground_truth, payload, frame_count=200)
    v1 = score_submission("egocentric-f1-v1", ground_truth, payload, frame_count=200)
    assert v2.details["true_positives"] == 2
    assert v1.details["true_positives"] == 1


def test_diagnostic_counters_use_weaker_predicates_and_never_change_the_reward():
    entries = [action("take", ("plate",), 11, 31), action("open", ("cup",), 41, 61)]
    result = score(entries)
    assert result.details["true_positives"] == 0
    assert result.details["verb_and_boundary_matches"] == 1
    assert result.details["boundary_only_matches"] == 2
    assert result.reward == 0.0


def test_invalid_entries_count_in_the_precision_denominator():
    entries = [GT["actions"][0], "x", GT["actions"][1], "y"]
    result = score(entries)
    assert result.details["precision"] == 0.5
    assert result.details["recall"] == 0.666667
    assert result.reward == round(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3), 6)


def test_reward_files_have_the_published_layout():
    result = score(GT["actions"])
    text = result.reward_json.decode()
    assert text.endswith("}\n")
    keys = list(json.loads(text))
    assert keys == [
        "reward",
        "ground_truth_actions",
        "predicted_actions",
        "valid_predicted_actions",
        "invalid_predicted_actions",
        "true_positives",
        "false_positives",
        "false_negatives",
        "precision",
        "recall",
        "f1",
        "frame_tolerance",
        "verb_and_boundary_matches",
        "boundary_only_matches",
    ]
    assert result.reward_txt == b"1.0\n"
    assert list(json.loads(result.details_json))[-1] == "reason"
    assert json.loads(result.details_json) == result.details


def test_frame_count_is_required_unless_the_ground_truth_carries_it():
    with pytest.raises(ParameterError):
        score_submission("egocentric-f1-v2", GT, b'{"actions": []}')
    carried = {**GT, "frame_count": 200}
    assert score_submission("egocentric-f1-v2", carried, b'{"actions": []}').reward == 0.0


def test_an_explicit_vocabulary_replaces_the_derived_one():
    vocabulary = {"verbs": ["put", "open"], "nouns": ["cup", "plate", "fridge"]}
    result = score([GT["actions"][0]], vocabulary=vocabulary)
    assert result.reason == "action 1 has a verb outside the vocabulary"
