"""Agreement between two ledgers: the scorer both ways, kappa, boundary differences."""

from __future__ import annotations

import copy

import pytest

from scoring import agreement, cohen_kappa
from tests.scoring.paths import EGO_GT, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, load_json


def test_cohen_kappa_matches_a_hand_computation():
    # observed 3/4, chance 1/2 * 1/4 + 1/2 * 3/4 = 1/2, kappa = (3/4 - 1/2) / (1/2)
    assert cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]) == pytest.approx(0.5)
    assert cohen_kappa(["x", "y"], ["y", "x"]) == pytest.approx(-1.0)


def test_cohen_kappa_edge_cases_are_defined():
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["x", "x"], ["x", "x"]) == 1.0
    with pytest.raises(ValueError):
        cohen_kappa(["x"], [])


def test_identical_action_ledgers_agree_perfectly():
    truth = load_json(EGO_GT)
    report = agreement("egocentric-f1-v2", truth, copy.deepcopy(truth), frame_count=PUBLISHED_FRAME_COUNT)
    assert report["a_as_prediction"]["reward"] == report["b_as_prediction"]["reward"] == 1.0
    assert report["kappa"] == {"verb": 1.0, "nouns": 1.0}
    assert report["boundary_differences"]["start"]["histogram"] == {"0": 172}
    assert report["unmatched"] == {"a": [], "b": []}
    assert report["union"]["agreed"] == 172


def test_boundary_differences_are_reported_in_frames():
    a = {"actions": [{"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 30}]}
    b = {"actions": [{"verb": "take", "nouns": ["cup"], "start_frame": 13, "end_frame": 28}]}
    report = agreement("egocentric-f1-v2", a, b, frame_count=100)
    assert report["boundary_differences"]["start"]["histogram"] == {"3": 1}
    assert report["boundary_differences"]["end"]["histogram"] == {"-2": 1}
    assert report["a_as_prediction"]["reward"] == 1.0


def test_the_scorer_runs_both_ways_on_break_point_ledgers():
    truth = load_json(TENNIS_GT)
    run = load_json(
        TENNIS / "calibration" / "rollouts" / "codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json"
    )
    report = agreement("hierarchical-bottleneck-v1", run, truth)
    assert report["a_as_prediction"]["reward"] == 0.3305
    assert report["pairs"] == 16
    assert report["unmatched"] == {"a": [9], "b": []}
    assert report["kappa"]["outcome"] == 1.0
    assert -1.0 <= report["kappa"]["terminal_result"] < 1.0


def test_moment_agreement_uses_the_corpus_grid_and_first_intervals():
    corpus = [{"video_id": "v", "duration": 10, "grid": {"step": 2}}]
    a = {"queries": [{"query_id": "q1", "video_id": "v", "source": "s", "intervals": [[2, 6]]}]}
    b = {"queries": [{"query_id": "q1", "video_id": "v", "source": "s", "intervals": [[2, 8]]}]}
    report = agreement("moment-utility-v1", a, b, corpus=corpus)
    assert report["a_as_prediction"]["details"]["per_query"][0]["iou"] == pytest.approx(4 / 6)
    assert report["boundary_differences"]["end"]["histogram"] == {"2": 1}
    assert report["union"]["conflicting"] == 1
