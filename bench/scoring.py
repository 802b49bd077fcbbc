"""Scoring benchmarks (budgets from DESIGN.md; a benchmark, not a timed test).

Run: ``.venv/bin/python bench/scoring.py``. Prints, for each workload, the median and
best of several repeats:

* a 2,000-entry egocentric submission (budget <= 50 ms) against the published key;
* a 256-event tennis submission at the shot caps (4,096 shots, every event pairing);
* 500 moment queries on 2-hour videos with a 0.5 s grid;
* the grid normaliser's closed form against brute force over all grid pairs
  (budget >= 100x), both giving the same value;
* per scorer, calls/s of ``python -m scoring score`` against a bare ``python -c pass``
  start, interleaved call by call (goal: a call costs <= 2.0x a bare start), and the
  in-process time per call on 200 generated inputs (``bench/scoring_calls.py``);
* with ``--baseline PATH`` (another checkout, e.g. ``/work/main``): the same command
  line and in-process figures for that checkout, run side by side with this one, and
  the tennis in-process ratio (goal: <= 0.44x of the baseline).

``--only calls`` runs just the last two sections.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from scoring import score_submission  # noqa: E402
from scoring.moments import best_grid_iou, brute_force_best_grid_iou, encode_rows, grid_from_step  # noqa: E402

DATA = REPO_ROOT / "data" / "agentic-vbench"
EGO_GT = DATA / "egocentric-activity-understanding" / "steps" / "solve" / "tests" / "gt.json"
TENNIS_GT = (
    DATA
    / "medvedev-de-minaur-2023-us-open-break-point-ledger"
    / "calibration"
    / "baselines"
    / "anchors"
    / "oracle"
    / "solution.json"
)


def timings(call, repeats: int) -> tuple[float, float]:
    """(median, best) wall time of ``call`` in milliseconds."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), min(samples)


def per_call(call, number: int) -> float:
    """Seconds per call of ``call`` over ``number`` calls."""
    started = time.perf_counter()
    for _ in range(number):
        call()
    return (time.perf_counter() - started) / number


def report(name: str, median: float, best: float, budget: str = "") -> None:
    print(f"{name:<64} median {median:8.1f} ms   best {best:8.1f} ms   {budget}")


def bench_egocentric() -> None:
    truth = json.loads(EGO_GT.read_text())
    rng = random.Random(2026)
    actions = []
    for _ in range(2000):
        action, shift = rng.choice(truth["actions"]), rng.randint(-12, 12)
        start = max(0, action["start_frame"] + shift)
        actions.append({**action, "start_frame": start, "end_frame": action["end_frame"] + shift})
    actions.sort(key=lambda a: a["start_frame"])
    payload = json.dumps({"actions": actions}).encode()
    for scorer in ("egocentric-f1-v2", "egocentric-f1-v1"):
        result = score_submission(scorer, truth, payload, frame_count=25692)
        assert result.details["valid_predicted_actions"] == 2000
        median, best = timings(lambda s=scorer: score_submission(s, truth, payload, frame_count=25692), 15)
        verdict = "OK" if median <= 50 else "OVER BUDGET"
        report(f"{scorer}: 2,000 entries ({len(payload):,} bytes)", median, best, f"budget <= 50 ms: {verdict}")


def bench_tennis() -> None:
    truth = json.loads(TENNIS_GT.read_text())
    rng = random.Random(7)
    longest = max(truth["break_points"], key=lambda event: len(event["shots"]))
    strokes = ["serve", "forehand_groundstroke", "backhand_groundstroke", "backhand_slice"]
    directions = ["wide", "middle", "receiver_backhand", "receiver_forehand"]
    events = []
    for _ in range(256):
        shots = [{"stroke": rng.choice(strokes), "direction": rng.choice(directions)} for _ in range(16)]
        events.append({**longest, "shots": shots})  # every event pairs with the longest rally
    payload = json.dumps({"break_points": events}).encode()
    for scorer in ("hierarchical-bottleneck-v1", "hierarchical-bottleneck-v2"):
        assert score_submission(scorer, truth, payload).reason == "ok"
        median, best = timings(lambda s=scorer: score_submission(s, truth, payload), 5)
        report(f"{scorer}: 256 events, 4,096 shots", median, best)
    one_long = [{**longest, "shots": events[0]["shots"] * 32}] + events[1:225]
    payload = json.dumps({"break_points": one_long}).encode()
    assert score_submission("hierarchical-bottleneck-v1", truth, payload).reason == "ok"
    median, best = timings(lambda: score_submission("hierarchical-bottleneck-v1", truth, payload), 5)
    report("hierarchical-bottleneck-v1: one 512-shot event + 224 x 16", median, best)


def bench_moments() -> None:
    rng = random.Random(11)
    videos = [f"video{k:02d}" for k in range(50)]
    # Distinct durations (about two hours each) so every video builds its own grid.
    corpus = [{"video_id": v, "duration": 7200.0 - 1.37 * k, "grid": {"step": 0.5}} for k, v in enumerate(videos)]
    queries, rows = [], []
    for k in range(500):
        intervals = []
        for _ in range(rng.randint(1, 3)):
            start = rng.uniform(0, 6900)
            intervals.append([round(start, 3), round(start + rng.uniform(2, 180), 3)])
        queries.append(
            {"query_id": f"q{k}", "video_id": rng.choice(videos), "source": f"s{k % 2}", "intervals": intervals}
        )
        first = rng.randrange(0, 14000)
        rows.append({"query_id": f"q{k}", "start": first * 0.5, "end": (first + rng.randint(1, 300)) * 0.5})
    truth, payload = {"queries": queries}, encode_rows(rows)
    result = score_submission("moment-utility-v1", truth, payload, corpus=corpus)
    assert result.details["scored_queries"] == 500 and result.details["invalid"] == 0
    median, best = timings(lambda: score_submission("moment-utility-v1", truth, payload, corpus=corpus), 5)
    report("moment-utility-v1: 500 queries, 50 x 2-hour videos, 0.5 s grid", median, best)


def bench_normaliser() -> None:
    rng = random.Random(3)
    print("grid normaliser, per query (closed form vs brute force over all grid pairs):")
    for duration, step in ((150, 2), (300, 2), (600, 2)):
        grid = grid_from_step(duration, step)
        cases = []
        for _ in range(5):
            start = rng.uniform(0, duration - 10)
            cases.append([(start, min(duration, start + rng.uniform(1, 60)))])
        closed, brute = 0.0, 0.0
        for intervals in cases:  # best of several repeats, as timeit does
            closed += min(per_call(lambda g=grid, i=intervals: best_grid_iou(g, i), 200) for _ in range(5))
            brute += min(per_call(lambda g=grid, i=intervals: brute_force_best_grid_iou(g, i), 1) for _ in range(3))
            assert best_grid_iou(grid, intervals) == brute_force_best_grid_iou(grid, intervals)
        closed, brute = closed / len(cases) * 1000, brute / len(cases) * 1000
        speedup = brute / closed
        verdict = "OK" if speedup >= 100 else "UNDER BUDGET"
        pairs = len(grid) * (len(grid) - 1) // 2
        print(
            f"  {len(grid):4d} grid points ({pairs:7,d} pairs): closed form {closed:8.4f} ms, "
            f"brute force {brute:9.1f} ms, {speedup:9,.0f}x (budget >= 100x: {verdict}); same values"
        )


def bench_calls(baseline: str | None) -> None:
    from bench.scoring_calls import SCORERS, cli_side_by_side, in_process_ms, in_process_side_by_side

    repos = [str(REPO_ROOT)] + ([baseline] if baseline else [])
    for cached in (True, False):
        condition = "bytecode cached (as installed)" if cached else "no bytecode cache: every call compiles"
        print(f"command line, {condition}; per call, 30 calls each, interleaved call by call.")
        print("  Median CPU time (user+system), wall-clock calls/s in brackets: on the shared machine")
        print("  wall time mostly measures waiting for a core.")
        for scorer in SCORERS:
            found = cli_side_by_side(repos, scorer, cached_bytecode=cached)
            bare_wall, bare_cpu = found["bare"]
            line = f"  {scorer:<28} python -c pass {1000 * bare_cpu:5.1f} ms ({1 / bare_wall:5.1f}/s)"
            for repo in repos:
                name = "this tree" if repo == str(REPO_ROOT) else "baseline"
                wall, cpu = found[repo]
                ratio = cpu / bare_cpu
                line += f" | {name} {1000 * cpu:5.1f} ms = {ratio:4.2f}x ({1 / wall:5.1f}/s = {wall / bare_wall:4.2f}x)"
                if repo == str(REPO_ROOT):
                    line += " goal <= 2.0x: " + ("OK" if ratio <= 2.0 else "OVER")
            print(line)
    print("in process, CPU time per call, 200 generated inputs per scorer (median / best of 5 passes):")
    for scorer in SCORERS:
        median, best = in_process_ms(score_submission, scorer)
        print(f"  {scorer:<28} {median:7.3f} ms / {best:7.3f} ms")
    if baseline:
        for scorer in ("hierarchical-bottleneck-v1", "hierarchical-bottleneck-v2"):
            found = in_process_side_by_side(repos, scorer)
            (now, now_best), (before, before_best) = found[repos[0]], found[baseline]
            verdict = "OK" if now / before <= 0.44 else "OVER"
            print(
                f"  {scorer} side by side with {baseline} (4 interleaved runs): "
                f"before {before:.3f} ms (best {before_best:.3f}), after {now:.3f} ms (best {now_best:.3f}), "
                f"after/before {now / before:.2f} (best {now_best / before_best:.2f}; goal <= 0.44: {verdict})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", help="another checkout to compare with, run side by side (e.g. /work/main)")
    parser.add_argument("--only", choices=["calls"], help="run only the per-call sections")
    args = parser.parse_args()
    print(f"scoring benchmarks (python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f})")
    if args.only is None:
        bench_egocentric()
        bench_tennis()
        bench_moments()
        bench_normaliser()
    bench_calls(args.baseline)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 shared cores)")


if __name__ == "__main__":
    main()
