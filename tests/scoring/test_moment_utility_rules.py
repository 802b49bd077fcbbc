"""Hand-computed cases of moment-utility-v1 (SCORING.md section 3)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from scoring import ParameterError, score_submission
from scoring.moments import DEFAULT_B, grid_from_step, reward_map, utility

CORPUS = [{"video_id": "v", "duration": 10, "grid": {"step": 2}}]
GT = {
    "queries": [
        {"query_id": "q1", "video_id": "v", "source": "s1", "intervals": [[2, 6]]},
        {"query_id": "q2", "video_id": "v", "source": "s1", "intervals": [[0, 4]]},
        {"query_id": "q3", "video_id": "v", "source": "s2", "intervals": [[3, 5]]},
    ]
}


def rows(*items) -> bytes:
    return "".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items).encode()


def score(payload: bytes, ground_truth=GT, corpus=CORPUS, **params):
    return score_submission("moment-utility-v1", ground_truth, payload, corpus=corpus, **params)


def test_utility_combines_thresholds_and_iou():
    assert utility(Fraction(0)) == 0.0
    assert utility(Fraction(1, 2)) == pytest.approx(0.7 / 3 + 0.15)
    assert utility(Fraction(9, 10)) == pytest.approx(0.7 + 0.27)
    assert utility(Fraction(1)) == pytest.approx(1.0)


def test_reward_map_sends_zero_b_and_one_to_zero_a_and_one():
    assert reward_map(0.0) == 0.0
    assert reward_map(DEFAULT_B) == pytest.approx(0.15)
    assert reward_map(1.0) == pytest.approx(1.0)
    assert reward_map(0.5, a=20, b=0.5) == pytest.approx(0.2)


def test_a_step_grid_ends_with_the_duration():
    assert grid_from_step(6, 2) == [0, 2, 4, 6]
    assert grid_from_step(7, 2) == [0, 2, 4, 6, 7]
    assert grid_from_step(7.0000001, 2) == [0, 2, 4, 6, 7.0000001]


def test_scores_are_normalised_per_query_and_averaged_per_source():
    result = score(rows({"query_id": "q1", "start": 2, "end": 6}, {"query_id": "q3", "start": 2, "end": 6}))
    # q1 exact (1.0), q2 missing (0.0): source s1 = 0.5; q3 reaches the grid optimum
    # IoU 0.5 (normaliser 0.5): source s2 = 1.0; sources weigh equally.
    assert result.details["per_source"] == {"s1": 0.5, "s2": 1.0}
    assert result.details["raw_quality"] == 0.75
    assert result.details["missing"] == 1
    assert result.reward == round(reward_map(0.75), 6)
    assert result.details["r1_at_0.5"] == round(2 / 3, 6)
    assert result.details["r1_at_0.7"] == round(1 / 3, 6)
    assert result.details["mean_iou"] == 0.5


@pytest.mark.parametrize(
    "bad",
    [
        {"query_id": "q1", "start": 1, "end": 6},
        {"query_id": "q1", "start": 6, "end": 2},
        {"query_id": "q1", "start": 2, "end": 2},
        {"query_id": "q1", "start": "2", "end": 6},
        {"query_id": "q1", "start": True, "end": 6},
        {"query_id": "q1", "start": 2, "end": 12},
        '{"query_id": "q1", "start": NaN, "end": 6}',
        '{"query_id": "q1", "start": 2, "end": Infinity}',
        {"query_id": "q1", "start": 2, "end": 10**400},
    ],
)
def test_an_illegal_row_scores_zero_for_its_query(bad):
    result = score(rows(bad))
    assert result.details["per_query"][0]["score"] == 0.0
    assert result.details["invalid"] == 1


def test_duplicated_rows_make_the_query_invalid():
    row = {"query_id": "q1", "start": 2, "end": 6}
    result = score(rows(row, row))
    assert result.details["per_query"][0]["status"] == "invalid: duplicated query id"
    assert result.details["invalid"] == 2


def test_lines_that_are_not_known_objects_are_invalid_rows_and_blank_lines_are_ignored():
    result = score(b'[1]\nnot json\n\n{"query_id": "zz", "start": 0, "end": 2}\n{"start": 0}\n   \n')
    assert result.details["invalid"] == 4
    assert result.details["missing"] == 3
    assert result.reason == (
        "3 missing, 4 invalid rows: line 1 is not a JSON object (a JSON array); "
        "line 2 is not JSON: Expecting value at column 1; line 4 has unknown query_id 'zz'; "
        "line 5 has no query_id"
    )


def test_endpoints_within_a_microsecond_of_the_grid_are_legal():
    result = score(rows({"query_id": "q1", "start": 2.0000005, "end": 5.9999995}))
    assert result.details["per_query"][0]["status"] == "ok"
    assert result.details["per_query"][0]["score"] == 1.0


def test_a_query_the_grid_cannot_reach_is_excluded_and_reported():
    ground_truth = {"queries": GT["queries"] + [{"query_id": "q4", "video_id": "v", "intervals": [[20, 30]]}]}
    result = score(rows({"query_id": "q4", "start": 0, "end": 2}), ground_truth=ground_truth)
    assert result.details["excluded_zero_normaliser"] == 1
    assert result.details["excluded_query_ids"] == ["q4"]
    assert result.details["scored_queries"] == 3
    assert "default" not in result.details["per_source"]


def test_an_explicit_grid_list_is_used_as_given():
    corpus = [{"video_id": "v", "duration": 10, "grid": [0, 3, 5, 10]}]
    result = score(rows({"query_id": "q3", "start": 3, "end": 5}), corpus=corpus)
    assert result.details["per_query"][2]["score"] == 1.0
    assert result.details["per_source"]["s2"] == 1.0


def test_an_oversized_or_undecodable_file_scores_zero():
    big = score(b" " * 10_000_001)
    assert big.reward == 0.0
    assert big.reason == "unreadable submission: submission exceeds 10000000 bytes"
    assert big.details["missing"] == 3
    assert score(b"\xff").reason.startswith("unreadable submission: 'utf-8' codec")


def test_reward_json_keys_are_in_the_contract_order():
    result = score(rows({"query_id": "q1", "start": 2, "end": 6}))
    assert list(json.loads(result.reward_json)) == [
        "reward",
        "raw_quality",
        "per_source",
        "queries",
        "scored_queries",
        "missing",
        "invalid",
        "r1_at_0.5",
        "r1_at_0.7",
        "r1_at_0.9",
        "mean_iou",
        "excluded_zero_normaliser",
    ]
    assert result.reward_json.endswith(b"}\n")
    assert result.reward_txt == f"{result.reward}\n".encode()


def test_the_corpus_must_cover_every_video_and_the_map_constants_must_be_sane():
    with pytest.raises(ParameterError):
        score(b"", corpus=[{"video_id": "other", "duration": 10, "grid": {"step": 2}}])
    with pytest.raises(ParameterError):
        score(b"", b=1.5)
    with pytest.raises(ParameterError):
        score_submission("moment-utility-v1", GT, b"")


def test_the_details_document_encoded_on_first_read_is_the_details_and_travels_with_the_result():
    import copy
    import pickle

    result = score(rows({"query_id": "q1", "start": 2, "end": 6}, {"query_id": "q2", "start": 0, "end": 2}))
    assert "details_json" not in vars(result)  # not encoded until asked for
    assert "hits" not in json.dumps(result.details)  # a summary-only value, not published
    for other in (pickle.loads(pickle.dumps(result)), copy.copy(result), copy.deepcopy(result)):
        assert other.details_json == result.details_json
        assert other == result
    document = json.loads(result.details_json)
    assert document == result.details
    assert list(document)[: len(json.loads(result.reward_json))] == list(json.loads(result.reward_json))
    assert result.details_json.endswith(b"}\n")
    assert vars(result)["details_json"] is result.details_json  # encoded once, then kept
