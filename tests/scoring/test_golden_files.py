"""Every golden file of the table at the end of SCORING.md, through the real CLI,
compared byte for byte."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.scoring.paths import EGO, EGO_GT, EGO_ORACLE, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, run_cli

CALIBRATION = TENNIS / "calibration"


@dataclass(frozen=True)
class Golden:
    scorer: str
    ground_truth: Path
    solution: str  # as given on the command line (relative to cwd)
    reward_json: Path
    reward_txt: Path | None
    cwd: Path

    @property
    def name(self) -> str:
        return f"{self.scorer}:{Path(self.solution).name}"


def _optional(path: Path) -> Path | None:
    return path if path.exists() else None


def egocentric_goldens() -> list[Golden]:
    cases = []
    for scorer, folder in (
        ("egocentric-f1-v2", EGO / "calibration" / "rollouts"),
        ("egocentric-f1-v1", EGO / "_older_versions" / "157e7b4" / "calibration" / "rollouts"),
    ):
        for solution in sorted(folder.glob("*.solution.json")):
            stem = solution.name.removesuffix(".solution.json")
            cases.append(
                Golden(
                    scorer,
                    EGO_GT,
                    str(solution),
                    folder / f"{stem}.reward.json",
                    _optional(folder / f"{stem}.reward.txt"),
                    EGO,
                )
            )
    return cases


def tennis_goldens() -> list[Golden]:
    cases = []
    for folder in (CALIBRATION / "rollouts", CALIBRATION / "ablations"):
        for solution in sorted(folder.glob("*.submitted-solution.json")):
            stem = solution.name.removesuffix(".submitted-solution.json")
            details = folder / f"{stem}.hierarchical-verifier-details.json"
            cases.append(Golden("hierarchical-bottleneck-v1", TENNIS_GT, str(solution), details, None, TENNIS))
    for solution in sorted((CALIBRATION / "baselines").glob("*/solution.json")):
        details = solution.with_name("hierarchical-verifier-details.json")
        cases.append(Golden("hierarchical-bottleneck-v1", TENNIS_GT, str(solution), details, None, TENNIS))
    for solution in sorted((CALIBRATION / "baselines" / "anchors").glob("*/solution.json")):
        cases.append(
            Golden(
                "hierarchical-bottleneck-v1",
                TENNIS_GT,
                str(solution),
                solution.with_name("reward.json"),
                _optional(solution.with_name("reward.txt")),
                TENNIS,
            )
        )
    # The no-media and single-frame runs submitted nothing: their golden details are the
    # published judge run on a missing path, relative to the task folder.
    for details in sorted((CALIBRATION / "ablations").glob("*.hierarchical-verifier-details.json")):
        stem = details.name.removesuffix(".hierarchical-verifier-details.json")
        if not (details.parent / f"{stem}.submitted-solution.json").exists():
            missing = f"calibration/ablations/{stem}.no-submission.json"
            cases.append(Golden("hierarchical-bottleneck-v1", TENNIS_GT, missing, details, None, TENNIS))
    return cases


GOLDENS = egocentric_goldens() + tennis_goldens()


def test_the_golden_table_is_complete():
    covered = {case.reward_json for case in GOLDENS}
    published = set(CALIBRATION.glob("**/*.hierarchical-verifier-details.json"))
    published |= set(CALIBRATION.glob("**/hierarchical-verifier-details.json"))
    published |= set((CALIBRATION / "baselines" / "anchors").glob("*/reward.json"))
    published |= set((EGO / "calibration" / "rollouts").glob("*.reward.json"))
    published |= set((EGO / "_older_versions").glob("*/calibration/rollouts/*.reward.json"))
    assert published == covered
    assert len(GOLDENS) == 12


@pytest.mark.parametrize("case", GOLDENS, ids=lambda case: case.name)
def test_cli_reproduces_every_golden_file_byte_for_byte(case: Golden, tmp_path: Path):
    reward_json, reward_txt = tmp_path / "reward.json", tmp_path / "reward.txt"
    args = ["score", "--scorer", case.scorer, "--ground-truth", str(case.ground_truth)]
    args += ["--solution", case.solution, "--reward-json", str(reward_json), "--reward-txt", str(reward_txt)]
    if case.scorer.startswith("egocentric"):
        args += ["--frame-count", str(PUBLISHED_FRAME_COUNT)]
    completed = run_cli(*args, cwd=case.cwd)
    assert completed.returncode == 0, completed.stderr
    assert reward_json.read_bytes() == case.reward_json.read_bytes()
    if case.reward_txt is not None:
        assert reward_txt.read_bytes() == case.reward_txt.read_bytes()


@pytest.mark.parametrize("scorer", ["egocentric-f1-v2", "egocentric-f1-v1"])
def test_cli_scores_the_published_oracle_one_with_both_egocentric_versions(scorer: str, tmp_path: Path):
    reward_json, reward_txt = tmp_path / "reward.json", tmp_path / "reward.txt"
    completed = run_cli(
        "score",
        "--scorer",
        scorer,
        "--ground-truth",
        str(EGO_GT),
        "--solution",
        str(EGO_ORACLE),
        "--reward-json",
        str(reward_json),
        "--reward-txt",
        str(reward_txt),
        "--frame-count",
        str(PUBLISHED_FRAME_COUNT),
    )
    assert completed.returncode == 0, completed.stderr
    assert reward_txt.read_bytes() == b"1.0\n"
    assert reward_json.read_bytes().startswith(b'{\n  "reward": 1.0,\n  "ground_truth_actions": 172,')
