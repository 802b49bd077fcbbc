"""The command line: exit statuses, the file layer, task options."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.scoring.paths import EGO_GT, EGO_ORACLE, TENNIS_GT, run_cli


def score_args(tmp_path: Path, scorer: str, solution: str, *extra: str) -> list[str]:
    return [
        "score",
        "--scorer",
        scorer,
        "--ground-truth",
        str(EGO_GT if scorer.startswith("egocentric") else TENNIS_GT),
        "--solution",
        solution,
        "--reward-json",
        str(tmp_path / "out" / "reward.json"),
        "--reward-txt",
        str(tmp_path / "out" / "reward.txt"),
        "--details-json",
        str(tmp_path / "out" / "details.json"),
        *extra,
    ]


def test_a_malformed_submission_still_exits_zero_with_reward_files(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    completed = run_cli(*score_args(tmp_path, "egocentric-f1-v2", str(bad), "--frame-count", "25692"))
    assert completed.returncode == 0
    assert (tmp_path / "out" / "reward.txt").read_text() == "0.0\n"
    assert json.loads((tmp_path / "out" / "details.json").read_text())["reason"].startswith("invalid solution: ")


@pytest.mark.parametrize(
    "extra",
    [
        ["--scorer-typo"],
        ["--corpus", "records.jsonl"],
    ],
)
def test_usage_errors_exit_two_and_write_nothing(tmp_path: Path, extra: list[str]):
    completed = run_cli(*score_args(tmp_path, "egocentric-f1-v2", str(EGO_ORACLE), "--frame-count", "25692", *extra))
    assert completed.returncode == 2
    assert not (tmp_path / "out").exists()


def test_missing_frame_count_and_unknown_scorer_exit_two(tmp_path: Path):
    assert run_cli(*score_args(tmp_path, "egocentric-f1-v2", str(EGO_ORACLE))).returncode == 2
    completed = run_cli(*score_args(tmp_path, "egocentric-f9", str(EGO_ORACLE)))
    assert completed.returncode == 2
    assert "unknown scorer" in completed.stderr
    assert not (tmp_path / "out").exists()


def test_the_egocentric_file_layer_rejects_symlinks_and_directories(tmp_path: Path):
    link = tmp_path / "link.json"
    os.symlink(EGO_ORACLE, link)
    for solution, reason in [
        (str(link), f"invalid solution: [Errno 40] Too many levels of symbolic links: '{link}'"),
        (str(tmp_path), "invalid solution: solution must be a regular file"),
    ]:
        completed = run_cli(*score_args(tmp_path, "egocentric-f1-v2", solution, "--frame-count", "25692"))
        assert completed.returncode == 0
        assert json.loads((tmp_path / "out" / "details.json").read_text())["reason"] == reason


def test_the_tennis_scorers_follow_symlinks_like_the_published_judge(tmp_path: Path):
    link = tmp_path / "link.json"
    os.symlink(TENNIS_GT, link)
    completed = run_cli(*score_args(tmp_path, "hierarchical-bottleneck-v2", str(link)))
    assert completed.returncode == 0
    assert (tmp_path / "out" / "reward.txt").read_text() == "1.0\n"
    assert "no separate details file" in completed.stderr
    assert not (tmp_path / "out" / "details.json").exists()


def test_moment_search_reads_the_corpus_records_file(tmp_path: Path):
    (tmp_path / "records.jsonl").write_text(
        json.dumps({"video_id": "v", "duration": 10, "grid": {"step": 2}, "features": "v.npz"}) + "\n"
    )
    (tmp_path / "gt.json").write_text(
        json.dumps({"queries": [{"query_id": "q", "video_id": "v", "source": "s", "intervals": [[2, 6]]}]})
    )
    (tmp_path / "results.jsonl").write_text(json.dumps({"query_id": "q", "start": 2, "end": 6}) + "\n")
    completed = run_cli(
        "score",
        "--scorer",
        "moment-utility-v1",
        "--ground-truth",
        str(tmp_path / "gt.json"),
        "--solution",
        str(tmp_path / "results.jsonl"),
        "--reward-json",
        str(tmp_path / "reward.json"),
        "--reward-txt",
        str(tmp_path / "reward.txt"),
        "--corpus",
        str(tmp_path / "records.jsonl"),
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads((tmp_path / "reward.json").read_text())["raw_quality"] == 1.0


def test_the_agreement_command_prints_json(tmp_path: Path):
    completed = run_cli(
        "agreement",
        "--scorer",
        "hierarchical-bottleneck-v1",
        "--ledger-a",
        str(TENNIS_GT),
        "--ledger-b",
        str(TENNIS_GT),
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["union"]["agreed"] == 16
