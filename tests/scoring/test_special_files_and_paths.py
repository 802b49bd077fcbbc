"""Special files, path spellings and the 16 MiB tennis cap against the published
verifiers' exact bytes (issue 28; docs/scoring.md, "Reading a submission").

Every case runs ``python -m scoring score`` in a subprocess and compares its reward
files byte for byte with what the judge writes: the published goldens with the judge's
reason in them (the empty-ledger and oracle records in data/agentic-vbench) and, where
the published judge scripts are at hand, the judge itself run beside it in a subprocess:
set ``AGENTIC_VBENCH_JUDGES`` to a folder holding ``egocentric/judge.py`` (with the
task's ``gt.json`` next to it) and ``tennis/judge.py`` (``hierarchical-bottleneck-v1``),
copied from PhiloLabs/agentic-vbench; their code is not kept in this repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scoring.constants import TENNIS_MAX_BYTES
from tests.scoring.paths import EGO_GT, EGO_ORACLE, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, run_cli
from tests.scoring.test_verifier_parity import EGO_REJECTED_REWARD, ego_rejected_details, tennis_rejected_reward

JUDGES = Path(os.environ["AGENTIC_VBENCH_JUDGES"]) if os.environ.get("AGENTIC_VBENCH_JUDGES") else None
ORACLE_REWARD = TENNIS / "calibration" / "baselines" / "anchors" / "oracle" / "reward.json"
TENNIS_SCORER, EGO_SCORER = "hierarchical-bottleneck-v1", "egocentric-f1-v1"


def ours(cwd: Path, scorer: str, solution: str) -> dict[str, bytes]:
    out = cwd / "ours"
    shutil.rmtree(out, ignore_errors=True)
    args = ["score", "--scorer", scorer, "--solution", solution]
    args += ["--reward-json", str(out / "reward.json"), "--reward-txt", str(out / "reward.txt")]
    if scorer == EGO_SCORER:
        args += ["--ground-truth", str(EGO_GT), "--frame-count", str(PUBLISHED_FRAME_COUNT)]
        args += ["--details-json", str(out / "details.json")]
    else:
        args += ["--ground-truth", str(TENNIS_GT)]
    completed = run_cli(*args, cwd=cwd)
    assert completed.returncode == 0, completed.stderr
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def judge(cwd: Path, scorer: str, solution: str) -> dict[str, bytes] | None:
    """The published judge's reward files for ``--solution solution`` (None: no judges)."""
    if JUDGES is None:
        return None
    out = cwd / "theirs"
    shutil.rmtree(out, ignore_errors=True)
    script = JUDGES / ("egocentric" if scorer == EGO_SCORER else "tennis") / "judge.py"
    args = [sys.executable, str(script), "--solution", solution]
    args += ["--reward-json", str(out / "reward.json"), "--reward-txt", str(out / "reward.txt")]
    if scorer == EGO_SCORER:
        args += ["--details-json", str(out / "details.json")]
    subprocess.run(args, cwd=cwd, check=True, timeout=120)
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def tennis_files(reason: str | None) -> dict[str, bytes]:
    """The judge's files: the oracle's record (reason None) or a rejection's."""
    if reason is None:
        return {"reward.json": ORACLE_REWARD.read_bytes(), "reward.txt": b"1.0\n"}
    return {"reward.json": tennis_rejected_reward(reason).encode(), "reward.txt": b"0.0\n"}


def ego_rejected_files(reason: str) -> dict[str, bytes]:
    return {
        "details.json": ego_rejected_details(f"invalid solution: {reason}").encode(),
        "reward.json": EGO_REJECTED_REWARD.encode(),
        "reward.txt": b"0.0\n",
    }


def check(cwd: Path, scorer: str, solution: str, expected: dict[str, bytes], *, prepare=None) -> None:
    """Ours equals the expected bytes, and (when the judges are at hand) the judge's."""
    if prepare:
        prepare()
    assert ours(cwd, scorer, solution) == expected
    if JUDGES is not None:
        if prepare:
            prepare()
        assert judge(cwd, scorer, solution) == expected


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(TENNIS_GT, tmp_path / "sol.json")
    shutil.copy(EGO_ORACLE, tmp_path / "ego.json")
    return tmp_path


# ------------------------------------------------------------------- special files


def test_dev_null_reads_as_an_empty_file(work: Path):
    check(
        work,
        TENNIS_SCORER,
        "/dev/null",
        tennis_files("unreadable solution.json: Expecting value: line 1 column 1 (char 0)"),
    )
    check(work, EGO_SCORER, "/dev/null", ego_rejected_files("solution must be a regular file"))


def _writer(fifo: Path, data: bytes):
    def prepare():
        def write():
            with open(fifo, "wb") as handle:  # blocks until the reader opens the FIFO
                handle.write(data)

        threading.Thread(target=write, daemon=True).start()

    return prepare


def test_a_fifo_whose_writer_closes_is_read_to_its_end(work: Path):
    fifo = work / "pipe.json"
    os.mkfifo(fifo)
    check(work, TENNIS_SCORER, str(fifo), tennis_files(None), prepare=_writer(fifo, TENNIS_GT.read_bytes()))
    empty = tennis_files("unreadable solution.json: Expecting value: line 1 column 1 (char 0)")
    check(work, TENNIS_SCORER, str(fifo), empty, prepare=_writer(fifo, b""))
    # the egocentric judge opens it without blocking and refuses it (no writer needed)
    check(work, EGO_SCORER, str(fifo), ego_rejected_files("solution must be a regular file"))


def test_where_the_judge_would_hang_or_exhaust_memory_the_refusal_is_bounded(work: Path):
    """A FIFO nobody writes to (the judge waits for ever) and endless devices (the
    judge reads until memory runs out): the empty MemoryError reason, in bounded time."""
    fifo = work / "silent.json"
    os.mkfifo(fifo)
    for solution in (str(fifo), "/dev/zero", "/dev/urandom"):
        started = time.monotonic()
        assert ours(work, TENNIS_SCORER, solution) == tennis_files("unreadable solution.json: ")
        assert time.monotonic() - started < 30
        assert ours(work, EGO_SCORER, solution) == ego_rejected_files("solution must be a regular file")


def test_a_stream_that_ends_past_the_bounds_is_refused_although_the_judge_scores_it(work: Path):
    """The documented difference (docs/scoring.md, "Reading a submission"): a FIFO that
    yields the oracle padded past 16 MiB, or whose writer closes only after the 2 s wait,
    cannot be told from an endless one and gets the bounded refusal; the judge reads it to
    its end and scores it (checked when the judges are at hand)."""
    from scoring.files import STREAM_MAX_BYTES, STREAM_WAIT_SECONDS

    fifo = work / "long.json"
    os.mkfifo(fifo)
    oracle = TENNIS_GT.read_bytes()
    padded = oracle + b" " * (STREAM_MAX_BYTES + 1 - len(oracle))

    def writer(delay: float, data: bytes) -> threading.Thread:
        def write():
            time.sleep(delay)
            try:
                with open(fifo, "wb") as handle:  # blocks until a reader opens the FIFO
                    handle.write(data)
            except BrokenPipeError:  # the reader stopped at its bound
                pass

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        return thread

    for delay, data in ((0, padded), (STREAM_WAIT_SECONDS + 1, oracle)):
        thread = writer(delay, data)
        assert ours(work, TENNIS_SCORER, str(fifo)) == tennis_files("unreadable solution.json: ")
        thread.join(timeout=delay + 1)
        if thread.is_alive():  # a late writer still waits for a reader: let it finish
            with open(fifo, "rb") as drain:
                drain.read()
            thread.join(timeout=5)
        if JUDGES is not None:
            writer(delay, data)
            assert judge(work, TENNIS_SCORER, str(fifo)) == tennis_files(None)


# ------------------------------------------------------------------ path spellings


def test_a_trailing_slash_after_a_file_is_the_file(work: Path):
    check(work, TENNIS_SCORER, "sol.json/", tennis_files(None))
    check(work, TENNIS_SCORER, f"{work}//sol.json/", tennis_files(None))
    oracle = ours(work, EGO_SCORER, "ego.json")
    assert json.loads(oracle["reward.json"])["reward"] == 1.0
    check(work, EGO_SCORER, "ego.json/", oracle)
    check(work, EGO_SCORER, "./ego.json//", oracle)


def test_the_empty_path_is_the_working_directory(work: Path):
    check(work, TENNIS_SCORER, "", tennis_files("unreadable solution.json: [Errno 21] Is a directory: '.'"))
    check(work, EGO_SCORER, "", ego_rejected_files("solution must be a regular file"))


def test_a_missing_file_is_named_as_pathlib_spells_it(work: Path):
    missing = "[Errno 2] No such file or directory: 'missing.json'"
    check(work, TENNIS_SCORER, ".//missing.json", tennis_files(f"unreadable solution.json: {missing}"))
    check(work, EGO_SCORER, ".//missing.json", ego_rejected_files(missing))
    check(work, TENNIS_SCORER, "./missing.json/", tennis_files(f"unreadable solution.json: {missing}"))


def test_judge_path_is_pathlibs_spelling():
    from itertools import product

    from scoring.files import judge_path

    for length in range(7):
        for letters in product("/.a", repeat=length):
            spelled = "".join(letters)
            assert judge_path(spelled) == str(Path(spelled)), spelled
    assert judge_path(Path("a/b")) == Path("a/b")


# ------------------------------------------------------------------- the 16 MiB cap


def test_the_command_line_scores_a_tennis_file_over_16_mib_as_the_judge(work: Path):
    big = work / "big.json"
    oracle = TENNIS_GT.read_bytes()
    big.write_bytes(oracle + b" " * (TENNIS_MAX_BYTES + 1 - len(oracle)))
    check(work, TENNIS_SCORER, str(big), tennis_files(None))
