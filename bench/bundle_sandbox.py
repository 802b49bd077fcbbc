"""What the bundle sandbox costs: the reference system's build and run stages in the
sandbox (``annotator.grading.sandbox``: namespaces, user switch, rlimits, read-only
layout) against the same command lines run directly, side by side.

Run (as root, for the sandbox to switch user): ``.venv/bin/python bench/bundle_sandbox.py
[--videos 6] [--rounds 2]``.

It writes a synthetic corpus (``retrieval.synthetic``, 30 s to 20 min videos), then for
each round runs ``build.sh`` and one ``run.sh`` call of every request, sandboxed and
direct, alternating, and prints the wall seconds of each stage, the median of each path
and the ratio sandboxed / direct, with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from annotator.bundles import reference_bundle  # noqa: E402
from annotator.grading import sandbox  # noqa: E402
from retrieval.synthetic import SyntheticConfig, generate_corpus, write_corpus  # noqa: E402


def corpus(folder: Path, videos: int):
    config = SyntheticConfig(n_videos=videos, min_duration=30, max_duration=1200, seed=11, split=(0.0, 0.0, 1.0))
    files = write_corpus(generate_corpus(config), folder)
    records = [json.loads(line) for line in files.records.read_text().splitlines()]
    features = {r["features"]: files.corpus_dir / r["features"] for r in records}
    requests = [json.loads(line) for line in files.test_requests.read_text().splitlines()]
    return records, features, requests


def sandboxed(parent: Path, records, features, requests, number: int) -> dict:
    job, calls = sandbox.prepare(
        parent / f"job-{number}", reference_bundle(), records, features, requests, requests_per_call=250
    )
    stages, rows = sandbox.run_bundle(job, calls, sandbox.Limits(), row_cap=10_000_000)
    assert all(s.outcome == "ok" for s in stages), [(s.name, s.stderr[-500:]) for s in stages]
    return {"build": stages[0].seconds, "run": sum(s.seconds for s in stages[1:]), "rows": rows.count(b"\n")}


def direct(parent: Path, records, features, requests, number: int) -> dict:
    app = parent / f"direct-{number}"
    job, _ = sandbox.prepare(app, reference_bundle(), records, features, requests, requests_per_call=10**6)
    env = sandbox.environment(job, str(Path(sys.executable).parent))
    times = {}
    for name, argv in (
        ("build", [job.app / "build.sh", "--corpus", job.corpus, "--index-dir", job.index]),
        ("run", [job.app / "run.sh", "--index-dir", job.index, "--queries", job.call_queries(1), "--output",
                 job.call_output(1)]),
    ):  # fmt: skip
        started = time.monotonic()
        subprocess.run([str(a) for a in argv], env=env, check=True, capture_output=True, cwd=job.root / "tmp")
        times[name] = round(time.monotonic() - started, 3)
    times["rows"] = job.call_output(1).read_bytes().count(b"\n")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    enforcement = sandbox.probe(sandbox.NOBODY)
    print(f"enforcement: {enforcement.as_dict()}")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    parent = Path(tempfile.mkdtemp(prefix="bench-bundle-"))
    parent.chmod(0o711)
    try:
        records, features, requests = corpus(parent / "data", args.videos)
        hours = sum(r["duration"] for r in records) / 3600
        print(f"corpus: {len(records)} videos, {hours:.2f} h, {len(requests)} requests")
        results = {"sandboxed": [], "direct": []}
        for number in range(args.rounds):
            for name, path in (("sandboxed", sandboxed), ("direct", direct)):
                figures = path(parent, records, features, requests, number)
                results[name].append(figures)
                print(f"round {number + 1} {name:>9}: build {figures['build']:.2f} s, run {figures['run']:.2f} s, "
                      f"{figures['rows']} rows")  # fmt: skip
        for stage in ("build", "run"):
            inside = statistics.median(r[stage] for r in results["sandboxed"])
            outside = statistics.median(r[stage] for r in results["direct"])
            print(f"{stage}: median sandboxed {inside:.2f} s, direct {outside:.2f} s, ratio {inside / outside:.2f}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        sandbox.cleanup(parent)
        shutil.rmtree(parent, ignore_errors=True)


if __name__ == "__main__":
    main()
