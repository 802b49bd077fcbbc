"""The calibration anchors the seeds report, reproduced on the published ground truths."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scoring import align_break_points, anchors, score_submission
from scoring.anchors import break_point_fixed_prior
from tests.scoring.paths import EGO_GT, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, load_json, run_cli

CALIBRATION = TENNIS / "calibration"
FULL_MEDIA = CALIBRATION / "rollouts" / "codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json"
SCOREBOARD = CALIBRATION / "ablations" / "codex-gpt-5.6-sol-high-v13-scoreboard-only.submitted-solution.json"
PRIOR = CALIBRATION / "baselines" / "score-result-prior-v4-exact" / "solution.json"


@pytest.fixture(scope="module")
def egocentric_table() -> dict[str, float]:
    table = anchors("egocentric-f1-v2", load_json(EGO_GT), frame_count=PUBLISHED_FRAME_COUNT)
    return {anchor.name: anchor.reward for anchor in table}


def test_egocentric_anchors_match_the_seed(egocentric_table):
    assert egocentric_table["oracle"] == 1.0
    assert egocentric_table["empty"] == 0.0
    assert egocentric_table["shift_plus_12"] == 1.0
    assert egocentric_table["shift_plus_13"] == 0.0
    assert egocentric_table["reversed"] == 0.005814
    assert egocentric_table["duplicated"] == 0.666667


def test_egocentric_random_vocabulary_and_fixed_prior_match_the_seed(egocentric_table):
    assert egocentric_table["random_vocabulary"] == 0.0
    assert egocentric_table["fixed_prior"] == 0.005814


def test_egocentric_v1_anchors_match_v2_on_the_published_key():
    table = anchors("egocentric-f1-v1", load_json(EGO_GT), frame_count=PUBLISHED_FRAME_COUNT)
    rewards = {anchor.name: anchor.reward for anchor in table}
    assert rewards["oracle"] == 1.0
    assert rewards["shift_plus_12"] == 1.0
    assert rewards["shift_plus_13"] == 0.0
    assert rewards["reversed"] == 0.005814
    assert rewards["duplicated"] == 0.666667


def _reward(scorer: str, path) -> float:
    return score_submission(scorer, load_json(TENNIS_GT), path.read_bytes()).reward


@pytest.mark.parametrize(
    ("scorer", "expected"),
    [
        ("hierarchical-bottleneck-v1", {"oracle": 1.0, "full": 0.3305, "scoreboard": 0.1175, "prior": 0.1833}),
        ("hierarchical-bottleneck-v2", {"oracle": 1.0, "full": 0.2990, "scoreboard": 0.0, "prior": 0.0449}),
    ],
)
def test_tennis_rewards_match_the_seed(scorer: str, expected: dict):
    assert _reward(scorer, TENNIS_GT) == expected["oracle"]
    assert _reward(scorer, FULL_MEDIA) == expected["full"]
    assert _reward(scorer, SCOREBOARD) == expected["scoreboard"]
    assert _reward(scorer, PRIOR) == expected["prior"]
    assert score_submission(scorer, load_json(TENNIS_GT), b'{"break_points": []}').reward == 0.0


def test_tennis_v2_full_media_credit_is_the_reviewers_exact_fraction():
    pairs = align_break_points(load_json(FULL_MEDIA), load_json(TENNIS_GT), version="v2")
    credit = sum((pair.event_credit for pair in pairs), Fraction(0))
    assert credit == Fraction(2220404818, 450131825)
    assert round(float(credit * Fraction(2, 33)), 6) == 0.298957


@pytest.mark.parametrize(
    ("scorer", "fixed_prior"), [("hierarchical-bottleneck-v1", 0.1833), ("hierarchical-bottleneck-v2", 0.0449)]
)
def test_tennis_anchor_table_reproduces_the_published_fixed_prior(scorer: str, fixed_prior: float):
    rewards = {anchor.name: anchor.reward for anchor in anchors(scorer, load_json(TENNIS_GT))}
    assert rewards["oracle"] == 1.0
    assert rewards["empty"] == 0.0
    assert rewards["fixed_prior"] == fixed_prior


def test_tennis_fixed_prior_is_the_published_baseline_event_for_event():
    reference = load_json(TENNIS_GT)["break_points"]
    published = load_json(PRIOR)["break_points"]
    assert break_point_fixed_prior(reference) == published


def test_anchors_command_prints_the_table():
    completed = run_cli(
        "anchors", "--scorer", "egocentric-f1-v2", "--ground-truth", str(EGO_GT), "--frame-count", "25692"
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert any(line.split()[:2] == ["reversed", "0.005814"] for line in lines)
    assert any(line.split()[:2] == ["fixed_prior", "0.005814"] for line in lines)
