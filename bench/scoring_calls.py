"""Per-call costs of the scorers: the command line against a bare interpreter start,
and in-process time per call on 200 generated inputs per scorer.

Used by ``bench/scoring.py`` (which prints the figures); the workloads are built from
the published data with fixed seeds and only ever handed to ``score_submission`` as
bytes, so the same workload can be scored by another checkout of the project (the
``--baseline`` run) without importing anything from this one.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "data" / "agentic-vbench"
EGO_GT = DATA / "egocentric-activity-understanding" / "steps" / "solve" / "tests" / "gt.json"
TENNIS_GT = (
    DATA / "medvedev-de-minaur-2023-us-open-break-point-ledger" / "calibration" / "baselines" / "anchors" / "oracle"
) / "solution.json"
INPUTS = 200
SCORERS = (
    "egocentric-f1-v2",
    "egocentric-f1-v1",
    "hierarchical-bottleneck-v1",
    "hierarchical-bottleneck-v2",
    "moment-utility-v1",
)


# ---------------------------------------------------------------------- workloads


def _egocentric_inputs(rng: random.Random) -> list[bytes]:
    truth = json.loads(EGO_GT.read_text())["actions"]
    inputs = []
    for k in range(INPUTS):
        actions = []
        for action in truth:
            if rng.random() < 0.15:
                continue
            shift = rng.randint(-14, 14) if rng.random() < 0.4 else 0
            entry = {**action, "start_frame": max(0, action["start_frame"] + shift)}
            entry["end_frame"] = max(entry["start_frame"] + 1, action["end_frame"] + shift)
            if rng.random() < 0.05:
                entry["verb"] = rng.choice(truth)["verb"]
            actions.append(entry)
        if k % 9 == 0:
            actions += actions[:10]
        inputs.append(json.dumps({"actions": actions}, indent=2 if k % 2 else None).encode())
    return inputs


def _tennis_inputs(rng: random.Random) -> list[bytes]:
    events = json.loads(TENNIS_GT.read_text())["break_points"]
    inputs = []
    for k in range(INPUTS):
        ledger = [dict(event) for event in events]
        if k % 7 == 0:
            rng.shuffle(ledger)
        for event in ledger:
            if rng.random() < 0.3:
                event["outcome"] = rng.choice(["saved", "converted"])
            if rng.random() < 0.3:
                event["shots"] = event["shots"][: rng.randint(0, len(event["shots"]))]
            if rng.random() < 0.1:
                event["rally_shots"] = str(event["rally_shots"])
        if k % 5 == 0:
            ledger += ledger[:4]
        inputs.append(json.dumps({"break_points": ledger}, indent=2 if k % 2 else None).encode())
    return inputs


def moment_task() -> tuple[dict, list[dict]]:
    """A 300-query moment-search task on 30 videos (2 s grids) and its corpus."""
    rng = random.Random(17)
    corpus = [{"video_id": f"v{k}", "duration": 150.0 - k, "grid": {"step": 2}} for k in range(30)]
    queries = []
    for k in range(300):
        start = rng.randrange(0, 60) * 2.0
        queries.append(
            {
                "query_id": f"q{k}",
                "video_id": f"v{k % 30}",
                "source": f"s{k % 3}",
                "intervals": [[start, start + rng.randrange(1, 20) * 2.0]],
            }
        )
    return {"queries": queries}, corpus


def _moment_inputs(rng: random.Random) -> list[bytes]:
    truth, _ = moment_task()
    inputs = []
    for _ in range(INPUTS):
        lines = []
        for query in truth["queries"]:
            if rng.random() < 0.1:
                continue
            start, end = query["intervals"][0]
            shift = rng.randrange(-3, 4) * 2.0
            lines.append(json.dumps({"query_id": query["query_id"], "start": max(0.0, start + shift), "end": end}))
        inputs.append(("\n".join(lines) + "\n").encode())
    return inputs


def workload(scorer_id: str) -> tuple[object, list[bytes], dict]:
    """(ground truth, 200 submissions, task parameters) for one scorer."""
    rng = random.Random(scorer_id)
    if scorer_id.startswith("egocentric"):
        return json.loads(EGO_GT.read_text()), _egocentric_inputs(rng), {"frame_count": 25692}
    if scorer_id.startswith("hierarchical"):
        return json.loads(TENNIS_GT.read_text()), _tennis_inputs(rng), {}
    truth, corpus = moment_task()
    return truth, _moment_inputs(rng), {"corpus": corpus}


# ----------------------------------------------------------------------- in-process


def in_process_ms(score_submission, scorer_id: str, passes: int = 5) -> tuple[float, float]:
    """(median, best) CPU milliseconds per call over ``passes`` passes of the 200 inputs."""
    truth, inputs, params = workload(scorer_id)
    for solution in inputs:  # warm up, and every input must score
        score_submission(scorer_id, truth, solution, **params)
    samples = []
    for _ in range(passes):  # CPU time of this process: the machine is shared
        started = time.process_time()
        for solution in inputs:
            score_submission(scorer_id, truth, solution, **params)
        samples.append((time.process_time() - started) * 1000 / len(inputs))
    return statistics.median(samples), min(samples)


def child_main(repo: str, scorer_id: str) -> None:
    """``--in-process-child REPO SCORER``: time the workload with REPO's scorers."""
    sys.path.insert(0, repo)
    from scoring import score_submission

    median, best = in_process_ms(score_submission, scorer_id)
    print(json.dumps({"median": median, "best": best}))


def in_process_side_by_side(repos: list[str], scorer_id: str, rounds: int = 4) -> dict[str, tuple[float, float]]:
    """Per-call (median of medians, best) for each repo, runs interleaved so both see
    the same machine load."""
    found: dict[str, list[dict]] = {repo: [] for repo in repos}
    for _ in range(rounds):
        for repo in repos:
            completed = subprocess.run(
                [sys.executable, __file__, "--in-process-child", repo, scorer_id],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": ""},
            )
            found[repo].append(json.loads(completed.stdout))
    return {
        repo: (statistics.median(r["median"] for r in runs), min(r["best"] for r in runs))
        for repo, runs in found.items()
    }


# ---------------------------------------------------------------------- command line


def _cli_files(folder: Path, scorer_id: str) -> list[str]:
    """The ``score`` arguments for one published-size submission of ``scorer_id``."""
    truth, inputs, params = workload(scorer_id)
    (folder / "gt.json").write_text(json.dumps(truth))
    solution = folder / "solution.json"
    solution.write_bytes(inputs[1])
    args = [
        "score",
        "--scorer",
        scorer_id,
        "--ground-truth",
        str(folder / "gt.json"),
        "--solution",
        str(solution),
        "--reward-json",
        str(folder / "out" / "reward.json"),
        "--reward-txt",
        str(folder / "out" / "reward.txt"),
    ]
    if "frame_count" in params:
        args += ["--frame-count", str(params["frame_count"])]
    if "corpus" in params:
        (folder / "records.jsonl").write_text("".join(json.dumps(row) + "\n" for row in params["corpus"]))
        args += ["--corpus", str(folder / "records.jsonl")]
    if scorer_id.startswith("egocentric"):
        args += ["--details-json", str(folder / "out" / "details.json")]
    return args


def _run(command: list[str], repo: str, pycache: str | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one child process. CPU time is
    what the comparison uses: on a shared, loaded machine wall time mostly measures
    how long the child waited for a core."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command,
        cwd=repo,
        env=_environment(repo, pycache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, command)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def _environment(repo: str, pycache: str | None) -> dict:
    """The child's environment: ``pycache`` set means bytecode is cached there (as an
    installed package has it; the repositories themselves are never written),
    ``None`` means every module is compiled from source on every call."""
    environment = {**os.environ, "PYTHONPATH": repo}
    environment.pop("PYTHONPYCACHEPREFIX", None)
    if pycache is None:
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment["PYTHONPYCACHEPREFIX"] = pycache
    return environment


def cli_side_by_side(
    repos: list[str], scorer_id: str, calls: int = 30, *, cached_bytecode: bool = True
) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per call of ``python -c pass`` and of ``python -m
    scoring score`` for each repo, the calls interleaved one by one."""
    with tempfile.TemporaryDirectory() as folder:
        args = _cli_files(Path(folder), scorer_id)
        pycache = str(Path(folder) / "pycache") if cached_bytecode else None
        # Without a cache, each repo's package runs from a copy without the __pycache__
        # folders a test run may have left in the checkout (Python would read them).
        sources = {repo: repo if cached_bytecode else _bare_copy(repo, Path(folder)) for repo in repos}
        for repo in repos:  # one call to fill the bytecode cache
            _run([sys.executable, "-m", "scoring", *args], sources[repo], pycache)
        samples: dict[str, list[tuple[float, float]]] = {"bare": [], **{repo: [] for repo in repos}}
        for _ in range(calls):
            samples["bare"].append(_run([sys.executable, "-c", "pass"], repos[0], pycache))
            for repo in repos:
                samples[repo].append(_run([sys.executable, "-m", "scoring", *args], sources[repo], pycache))
    return {
        name: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
        for name, values in samples.items()
    }


def _bare_copy(repo: str, folder: Path) -> str:
    """A folder holding a copy of ``repo``'s ``scoring`` package without bytecode."""
    import shutil

    target = folder / f"source-{len(list(folder.glob('source-*')))}"
    shutil.copytree(Path(repo) / "scoring", target / "scoring", ignore=shutil.ignore_patterns("__pycache__"))
    return str(target)


if __name__ == "__main__" and sys.argv[1:2] == ["--in-process-child"]:
    child_main(sys.argv[2], sys.argv[3])
