"""Uploads take their byte caps and over-cap reasons from the scorers, so an upload and
``python -m scoring score`` reject the same files with the same text and the same
reward files -- except the tennis cap, which is the server's own: the command line, a
drop-in for the published judge, scores a tennis file of any size as the judge does
(docs/scoring.md, "Reading a submission")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from annotator.base.grading.uploads import byte_cap, make_file
from scoring import SCORERS, SolutionRejected, egocentric, get_scorer, moments, score_submission, tennis
from scoring.files import read_solution
from tests.grading.conftest import GTEA_FRAMES, TENNIS_ORACLE

EGOCENTRIC_GT = "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/gt.json"
MODULE_CAPS = {
    "actions": egocentric.MAX_SOLUTION_BYTES,
    "break_points": tennis.MAX_SOLUTION_BYTES,
    "moments": moments.MAX_SOLUTION_BYTES,
}


def task(kind: str, folder) -> tuple[object, dict, list[str]]:
    """(ground truth, parameters, the extra command-line options) of a small task."""
    if kind == "actions":
        truth = json.loads(open(EGOCENTRIC_GT, encoding="utf-8").read())
        return truth, {"frame_count": GTEA_FRAMES}, ["--frame-count", str(GTEA_FRAMES)]
    if kind == "break_points":
        return json.loads(TENNIS_ORACLE.read_text()), {}, []
    corpus = [{"video_id": "v", "duration": 60.0, "grid": {"step": 2}}]
    (folder / "records.jsonl").write_text(json.dumps(corpus[0]) + "\n")
    truth = {"queries": [{"query_id": "q", "video_id": "v", "intervals": [[4.0, 10.0]]}]}
    return truth, {"corpus": corpus}, ["--corpus", str(folder / "records.jsonl")]


def padded(size: int) -> bytes:
    """A well-formed submission padded with spaces to exactly ``size`` bytes."""
    document = b'{"actions": [], "break_points": []}'
    return document + b" " * (size - len(document))


@pytest.mark.parametrize("scorer_id", list(SCORERS))
def test_the_cap_and_reason_are_the_scorers_own(scorer_id):
    scorer = get_scorer(scorer_id)
    cap = byte_cap(scorer_id)
    assert cap.limit == scorer.max_solution_bytes == MODULE_CAPS[scorer.kind]
    assert cap.reason == scorer.over_cap_reason
    assert cap.reason.endswith(f" exceeds {cap.limit} bytes")


@pytest.mark.parametrize("scorer_id", list(SCORERS))
def test_an_upload_and_the_command_line_reject_the_same_file_with_the_same_output(scorer_id, tmp_path):
    scorer = get_scorer(scorer_id)
    cap = byte_cap(scorer_id)
    at_cap, over_cap = padded(cap.limit), padded(cap.limit + 1)

    # At the cap: both keep the bytes.
    (tmp_path / "at.json").write_bytes(at_cap)
    assert read_solution(scorer.kind, tmp_path / "at.json") == at_cap
    assert make_file("at", "at.json", [at_cap], cap).content == at_cap

    # One byte over: both refuse, with one text.
    solution = tmp_path / "solution.json"
    solution.write_bytes(over_cap)
    read = read_solution(scorer.kind, solution)
    uploaded = make_file("over", "solution.json", [over_cap[:1000], over_cap[1000:]], cap)
    assert isinstance(read, SolutionRejected)
    assert uploaded.content is None and uploaded.size == len(over_cap)
    assert uploaded.rejected_reason == str(read) == scorer.over_cap_reason

    # The reward files of the refused upload (scored as the grading worker scores it)
    # are the bytes the command line writes for that file.
    truth, params, options = task(scorer.kind, tmp_path)
    (tmp_path / "gt.json").write_text(json.dumps(truth))
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "scoring", "score", "--scorer", scorer_id, "--ground-truth", str(tmp_path / "gt.json"),
         "--solution", str(solution), "--reward-json", str(out / "reward.json"), "--reward-txt",
         str(out / "reward.txt"), *options],
        check=True,
    )  # fmt: skip
    result = score_submission(scorer_id, truth, SolutionRejected(uploaded.rejected_reason), **params)
    assert result.reward == 0.0
    assert scorer.over_cap_reason in result.reason
    if scorer.kind == "break_points":  # the judge has no cap: neither has its drop-in
        scored = score_submission(scorer_id, truth, over_cap, **params)
        assert scored.reason == "ok" and scored.reward_json == (out / "reward.json").read_bytes()
        assert result.reward_json != scored.reward_json
        return
    assert result.reward_json == (out / "reward.json").read_bytes()
    assert result.reward_txt == (out / "reward.txt").read_bytes()


def test_a_site_ceiling_below_a_scorers_cap_is_named_as_the_sites():
    cap = byte_cap("egocentric-f1-v2", site_limit=1000)
    assert (cap.limit, cap.reason) == (1000, "solution exceeds 1000 bytes (FrameLedger upload limit)")
    # a ceiling above the cap cannot lift it: the scorer would refuse the file anyway
    assert byte_cap("egocentric-f1-v2", site_limit=10**9).limit == egocentric.MAX_SOLUTION_BYTES


def test_the_server_keeps_its_cap_on_tennis_uploads():
    """Uploads (the server) still refuse a tennis file over 16 MiB, which the command line
    scores as the judge does (tests/scoring/test_special_files_and_paths.py)."""
    cap = byte_cap("hierarchical-bottleneck-v1")
    assert (cap.limit, cap.reason) == (16 * 1024 * 1024, "solution exceeds 16777216 bytes")
    oracle = TENNIS_ORACLE.read_bytes()
    uploaded = make_file("big", "big.json", [oracle, b" " * (cap.limit + 1 - len(oracle))], cap)
    assert uploaded.content is None and uploaded.rejected_reason == cap.reason
