"""The public API the Django app calls: registry, errors, ScoreResult."""

from __future__ import annotations

import dataclasses
import json

import pytest

import scoring
from scoring import SCORERS, ParameterError, ScoreResult, UnknownScorer, get_scorer, score_submission
from tests.scoring.paths import EGO, EGO_GT, PUBLISHED_FRAME_COUNT, load_json, run_cli


def test_the_registry_holds_the_five_versioned_scorers():
    assert set(SCORERS) == {
        "egocentric-f1-v2",
        "egocentric-f1-v1",
        "hierarchical-bottleneck-v1",
        "hierarchical-bottleneck-v2",
        "moment-utility-v1",
    }
    assert get_scorer("egocentric-f1-v2").kind == "actions"
    assert {p.name: p.default for p in get_scorer("egocentric-f1-v1").parameters}["tolerance"] == 12
    assert {p.name: p.default for p in get_scorer("moment-utility-v1").parameters}["b"] == 0.14696558206208937


def test_an_unknown_scorer_is_a_value_error():
    with pytest.raises(UnknownScorer) as raised:
        get_scorer("egocentric-f1-v9")
    assert isinstance(raised.value, ValueError)
    with pytest.raises(UnknownScorer):
        score_submission("nope", {}, b"")


def test_an_unknown_parameter_is_refused():
    with pytest.raises(ParameterError):
        score_submission("hierarchical-bottleneck-v1", {"break_points": []}, b"{}", tolerance=3)


def test_a_bad_ground_truth_raises_a_value_error_not_an_assert():
    with pytest.raises(ValueError):
        score_submission("egocentric-f1-v2", {"actions": "x"}, b"{}", frame_count=10)
    with pytest.raises(ValueError):
        score_submission("hierarchical-bottleneck-v1", {"events": []}, b"{}")


def test_score_result_is_frozen_and_records_the_scorer():
    result = score_submission("egocentric-f1-v2", load_json(EGO_GT), b"{}", frame_count=PUBLISHED_FRAME_COUNT)
    assert isinstance(result, ScoreResult)
    assert result.scorer_id == "egocentric-f1-v2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.reward = 1.0  # type: ignore[misc]


def test_a_read_error_scores_zero_with_the_scorers_prefix():
    error = FileNotFoundError(2, "No such file or directory", "x.json")
    ego = score_submission("egocentric-f1-v2", load_json(EGO_GT), error, frame_count=PUBLISHED_FRAME_COUNT)
    assert ego.reason == "invalid solution: [Errno 2] No such file or directory: 'x.json'"
    tennis = score_submission("hierarchical-bottleneck-v2", {"break_points": []}, error)
    assert tennis.reason == "unreadable solution.json: [Errno 2] No such file or directory: 'x.json'"


def test_the_cli_writes_exactly_the_bytes_of_score_submission(tmp_path):
    solution = EGO / "calibration" / "rollouts" / "claude-opus-4.8.solution.json"
    expected = score_submission(
        "egocentric-f1-v2", load_json(EGO_GT), solution.read_bytes(), frame_count=PUBLISHED_FRAME_COUNT
    )
    files = {name: tmp_path / name for name in ("r.json", "r.txt", "d.json")}
    completed = run_cli(
        "score",
        "--scorer",
        "egocentric-f1-v2",
        "--ground-truth",
        str(EGO_GT),
        "--solution",
        str(solution),
        "--reward-json",
        str(files["r.json"]),
        "--reward-txt",
        str(files["r.txt"]),
        "--details-json",
        str(files["d.json"]),
        "--frame-count",
        "25692",
    )
    assert completed.returncode == 0, completed.stderr
    assert files["r.json"].read_bytes() == expected.reward_json
    assert files["r.txt"].read_bytes() == expected.reward_txt
    assert files["d.json"].read_bytes() == expected.details_json
    assert json.loads(expected.details_json)["reason"] == "ok"


def test_every_exported_name_exists():
    for name in scoring.__all__:
        assert hasattr(scoring, name), name
