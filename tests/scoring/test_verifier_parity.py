"""The three differences issue 11 found against the published verifiers, as regression
tests with the verifier's exact bytes, and the rules that fix them (docs/scoring.md,
"Reading a submission").

1. Line endings before a JSON syntax error: the verifiers parse text-mode strings.
2. Nesting depth: egocentric parses total depth <= 992 and rejects 993, tennis <= 994
   and rejects 995, with the decoder's own message, whoever calls the scorer.
3. Endless or non-regular files: refused in bounded time, never read whole, never
   blocking for long (the special files and path spellings of issue 28 are in
   test_special_files_and_paths.py).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from scoring import score_submission
from scoring.files import read_solution
from tests.scoring.paths import EGO_GT, EGO_ORACLE, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, load_json, run_cli

EMPTY_TENNIS_REWARD = TENNIS / "calibration" / "baselines" / "anchors" / "empty" / "reward.json"
ARRAY_MESSAGE = "maximum recursion depth exceeded while decoding a JSON array from a unicode string"
OBJECT_MESSAGE = "maximum recursion depth exceeded while decoding a JSON object from a unicode string"

# What the published egocentric judge writes for any whole-file rejection of the
# published key (172 actions): every count 0, reason in details.json.
EGO_REJECTED_REWARD = """{
  "reward": 0.0,
  "ground_truth_actions": 172,
  "predicted_actions": 0,
  "valid_predicted_actions": 0,
  "invalid_predicted_actions": 0,
  "true_positives": 0,
  "false_positives": 0,
  "false_negatives": 172,
  "precision": 0.0,
  "recall": 0.0,
  "f1": 0.0,
  "frame_tolerance": 12,
  "verb_and_boundary_matches": 0,
  "boundary_only_matches": 0
}
"""


def ego_rejected_details(reason: str) -> str:
    return EGO_REJECTED_REWARD[: -len("\n}\n")] + f",\n  {json.dumps('reason')}: {json.dumps(reason)}\n}}\n"


def tennis_rejected_reward(reason: str) -> str:
    """The judge's reward.json for a rejected file: the published empty-ledger golden
    with the reason in place of "ok"."""
    golden = EMPTY_TENNIS_REWARD.read_text()
    assert '"reason": "ok"' in golden
    return golden.replace('"reason": "ok"', f'"reason": {json.dumps(reason)}', 1)


def cli_score(tmp_path: Path, scorer: str, solution: Path | str) -> dict[str, str]:
    out = tmp_path / "out"
    args = ["score", "--scorer", scorer, "--solution", str(solution)]
    args += ["--reward-json", str(out / "reward.json"), "--reward-txt", str(out / "reward.txt")]
    if scorer.startswith("egocentric"):
        args += ["--ground-truth", str(EGO_GT), "--frame-count", str(PUBLISHED_FRAME_COUNT)]
        args += ["--details-json", str(out / "details.json")]
    else:
        args += ["--ground-truth", str(TENNIS_GT)]
    completed = run_cli(*args)
    assert completed.returncode == 0, completed.stderr
    return {path.name: path.read_text() for path in out.iterdir()}


# ------------------------------------------------------------------ 1. line endings


def test_cause_1_egocentric_cr_before_a_syntax_error(tmp_path: Path):
    solution = tmp_path / "solution.json"
    solution.write_bytes(b"\r}")
    files = cli_score(tmp_path, "egocentric-f1-v2", solution)
    assert files["details.json"] == ego_rejected_details("invalid solution: Expecting value: line 2 column 1 (char 1)")
    assert files["reward.json"] == EGO_REJECTED_REWARD
    assert files["reward.txt"] == "0.0\n"


def test_cause_1_tennis_crlf_before_a_syntax_error(tmp_path: Path):
    solution = tmp_path / "solution.json"
    solution.write_bytes(b'{"break_points": [\r\n,]}')
    files = cli_score(tmp_path, "hierarchical-bottleneck-v1", solution)
    expected = tennis_rejected_reward("unreadable solution.json: Expecting value: line 2 column 1 (char 19)")
    assert files["reward.json"] == expected
    assert files["reward.txt"] == "0.0\n"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"{\r\r\r  x", "Expecting property name enclosed in double quotes: line 4 column 3 (char 6)"),
        (b'{"actions": []}\r\n\r\n]', "Extra data: line 3 column 1 (char 17)"),
        (b"\r\n\r\n", "Expecting value: line 3 column 1 (char 2)"),
        (b'{"actions": [\r\n"\r\n', "Invalid control character at: line 2 column 2 (char 15)"),
    ],
)
def test_lone_cr_and_crlf_are_one_newline_each(data: bytes, reason: str):
    result = score_submission("egocentric-f1-v2", load_json(EGO_GT), data, frame_count=PUBLISHED_FRAME_COUNT)
    assert result.reason == f"invalid solution: {reason}"


def test_a_valid_file_with_cr_line_endings_scores_as_with_lf():
    oracle = EGO_ORACLE.read_bytes()
    for ending in (b"\r", b"\r\n"):
        result = score_submission(
            "egocentric-f1-v2", load_json(EGO_GT), oracle.replace(b"\n", ending), frame_count=PUBLISHED_FRAME_COUNT
        )
        assert result.reward == 1.0


# ---------------------------------------------------------------------- 2. nesting


def nested_actions(depth: int, *, ledger: bytes, kind: str = "array") -> bytes:
    """The ledger with one ignored key whose value makes the total nesting ``depth``
    (the root object is level 1)."""
    inner = depth - 1
    value = "[" * inner + "]" * inner if kind == "array" else '{"k": ' * (inner - 1) + "{}" + "}" * (inner - 1)
    document = ledger.rstrip()
    assert document.endswith(b"}")
    return document[:-1] + b', "ignored": ' + value.encode() + b"}"


EGO_LIMIT, TENNIS_LIMIT = 992, 994


@pytest.mark.parametrize("kind", ["array", "object"])
def test_cause_2_egocentric_depth_limit_and_message(kind: str):
    truth, oracle = load_json(EGO_GT), EGO_ORACLE.read_bytes()
    for depth, expected in ((987, "ok"), (EGO_LIMIT, "ok"), (EGO_LIMIT + 1, None), (EGO_LIMIT + 40, None)):
        result = score_submission(
            "egocentric-f1-v2", truth, nested_actions(depth, ledger=oracle, kind=kind), frame_count=25692
        )
        message = ARRAY_MESSAGE if kind == "array" else OBJECT_MESSAGE
        assert result.reason == (expected or f"invalid solution: {message}"), depth
        assert result.reward == (1.0 if expected else 0.0)


@pytest.mark.parametrize("kind", ["array", "object"])
def test_cause_2_tennis_depth_limit_and_message(kind: str):
    truth, oracle = load_json(TENNIS_GT), TENNIS_GT.read_bytes()
    for depth in (987, TENNIS_LIMIT, TENNIS_LIMIT + 1):
        result = score_submission("hierarchical-bottleneck-v1", truth, nested_actions(depth, ledger=oracle, kind=kind))
        if depth <= TENNIS_LIMIT:
            assert (result.reward, result.reason, result.details["root_schema_issue"]) == (1.0, "ok", True)
        else:
            message = ARRAY_MESSAGE if kind == "array" else OBJECT_MESSAGE
            assert result.reason == f"unreadable solution.json: {message}"
            assert result.reward_json.decode() == tennis_rejected_reward(result.reason)


def test_cause_2_the_command_line_accepts_987_deep_as_the_verifier(tmp_path: Path):
    solution = tmp_path / "solution.json"
    solution.write_bytes(nested_actions(987, ledger=EGO_ORACLE.read_bytes()))
    assert cli_score(tmp_path, "egocentric-f1-v2", solution)["reward.txt"] == "1.0\n"
    solution.write_bytes(nested_actions(EGO_LIMIT + 1, ledger=EGO_ORACLE.read_bytes()))
    details = cli_score(tmp_path, "egocentric-f1-v2", solution)["details.json"]
    assert details == ego_rejected_details(f"invalid solution: {ARRAY_MESSAGE}")


def _score_at_depth(frames: int, data: bytes) -> str:
    if frames:
        return _score_at_depth(frames - 1, data)
    return score_submission("egocentric-f1-v2", load_json(EGO_GT), data, frame_count=25692).reason


def _in_thread(function, *args, stack_size: int | None = None):
    outcome = {}
    previous = threading.stack_size(stack_size) if stack_size else None
    try:
        worker = threading.Thread(target=lambda: outcome.setdefault("value", function(*args)))
        worker.start()
    finally:
        if stack_size:
            threading.stack_size(previous)
    worker.join()
    return outcome["value"]


def test_cause_2_the_result_does_not_depend_on_the_caller():
    """From a shallow caller, 50 and 400 frames deeper, on a worker thread with a small
    stack, and under a lowered recursion limit: always the verifier's answer."""
    oracle = EGO_ORACLE.read_bytes()
    ok, too_deep = nested_actions(EGO_LIMIT, ledger=oracle), nested_actions(EGO_LIMIT + 1, ledger=oracle)
    rejected = f"invalid solution: {ARRAY_MESSAGE}"
    for frames in (0, 50, 400):
        assert _score_at_depth(frames, ok) == "ok"
        assert _score_at_depth(frames, too_deep) == rejected
    assert _in_thread(_score_at_depth, 300, ok, stack_size=512 * 1024) == "ok"
    assert _in_thread(_score_at_depth, 300, too_deep, stack_size=512 * 1024) == rejected
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(600)
    try:
        assert _score_at_depth(100, ok) == "ok"
        assert sys.getrecursionlimit() == 600  # put back after the parse
    finally:
        sys.setrecursionlimit(limit)


def test_a_syntax_error_before_the_too_deep_container_wins():
    data = b'{"actions": [] , , "x": ' + b"[" * 2000
    result = score_submission("egocentric-f1-v2", load_json(EGO_GT), data, frame_count=25692)
    assert (
        result.reason
        == "invalid solution: Expecting property name enclosed in double quotes: line 1 column 18 (char 17)"
    )
    # ... and a container the decoder refuses at that position is a syntax error too
    data = b'{"actions": []' + b"[" * 2000
    result = score_submission("egocentric-f1-v2", load_json(EGO_GT), data, frame_count=25692)
    assert result.reason == "invalid solution: Expecting ',' delimiter: line 1 column 15 (char 14)"


# ------------------------------------------------------------- 3. the file layer


def test_cause_3_dev_zero_as_the_tennis_solution(tmp_path: Path):
    files = cli_score(tmp_path, "hierarchical-bottleneck-v1", "/dev/zero")
    assert files["reward.json"] == tennis_rejected_reward("unreadable solution.json: ")
    assert files["reward.txt"] == "0.0\n"


def test_cause_3_dev_zero_for_the_other_scorers(tmp_path: Path):
    files = cli_score(tmp_path, "egocentric-f1-v2", "/dev/zero")
    assert files["details.json"] == ego_rejected_details("invalid solution: solution must be a regular file")
    assert isinstance(read_solution("moments", "/dev/zero"), ValueError)


@pytest.mark.parametrize("kind", ["actions", "break_points", "moments"])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, kind: str):
    fifo = tmp_path / "solution.json"
    os.mkfifo(fifo)
    outcome = _in_thread(read_solution, kind, fifo)  # a blocking open would hang the test
    expected = {
        "actions": "solution must be a regular file",
        "break_points": "",
        "moments": "submission must be a regular file",
    }[kind]
    assert isinstance(outcome, ValueError) and str(outcome) == expected


def test_a_fifo_through_the_command_line(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    files = cli_score(tmp_path, "hierarchical-bottleneck-v2", fifo)
    assert json.loads(files["reward.json"])["details"]["reason"] == "unreadable solution.json: "


def test_a_directory_gives_the_tennis_judges_error_text(tmp_path: Path):
    folder = tmp_path / "solution.json"
    folder.mkdir()
    files = cli_score(tmp_path, "hierarchical-bottleneck-v1", folder)
    assert files["reward.json"] == tennis_rejected_reward(
        f"unreadable solution.json: [Errno 21] Is a directory: '{folder}'"
    )


def test_reads_stop_one_byte_past_the_cap(tmp_path: Path):
    from scoring.constants import EGOCENTRIC_MAX_BYTES, MOMENTS_MAX_BYTES, TENNIS_MAX_BYTES

    for kind, cap, reason in (
        ("break_points", TENNIS_MAX_BYTES, f"solution exceeds {TENNIS_MAX_BYTES} bytes"),
        ("moments", MOMENTS_MAX_BYTES, f"submission exceeds {MOMENTS_MAX_BYTES} bytes"),
        ("actions", EGOCENTRIC_MAX_BYTES, f"solution exceeds {EGOCENTRIC_MAX_BYTES} bytes"),
    ):
        path = tmp_path / f"{kind}.json"
        path.write_bytes(b" " * cap)
        assert read_solution(kind, path) == b" " * cap
        with path.open("ab") as handle:
            handle.write(b" ")
        outcome = read_solution(kind, path)
        assert isinstance(outcome, ValueError) and str(outcome) == reason
