"""What the bundle sandbox costs, side by side in one run: the same stage scripts in the
sandbox (``annotator.base.grading.sandbox``: bwrap's allow-list root, a uid of the job's own,
cgroups, the job's own filesystem, cleanup) and run directly (same scripts, no sandbox).

Run as root (the sandbox refuses otherwise): ``.venv/bin/python bench/bundle_sandbox.py
[--stages 20] [--videos 4] [--rounds 2] [--hold 60]``.

1. **Per-stage overhead**: a job of one stage that does nothing (``exit 0``), ``--stages``
   times each way; sandboxed, the time includes making, formatting and mounting the job's
   filesystem and unmounting and deleting it. The median wall seconds of each and the
   difference (the goal: at most 0.3 s).
2. **The worker's CPU while a stage holds much**: a stage that makes 200,000 entries (the
   default entries cap) and 65,000 mappings of a file, then holds them until ``--hold``
   seconds; the worker process's own CPU seconds (``RUSAGE_SELF``: its threads, not the
   stage's processes) over the stage, against its wall time (the goal: at most 1 %).
3. **The worker's CPU while a stage floods its output** (``--flood SECONDS``, default 20): a
   stage that writes ``/dev/zero`` to stdout for that long (again after every error); the
   worker's own CPU seconds over the stage.
   Since the stages' logs are files on a tmpfs of their own (the kernel stops them at
   ``limits.log_file_bytes``), the worker reads nothing while it runs; before, it read the
   pipe to its end. Run the same command with the code of another checkout to compare
   (``FRAMELEDGER_BENCH_CODE=/path/to/checkout``).
4. **The reference bundle** on a synthetic corpus (``retrieval.synthetic``): build and one call
   of every request, sandboxed and direct, alternating, ``--rounds`` times; the rows of both
   must be byte-identical and the scorer's reward the same.

The load average is printed before and after: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(
    0, os.environ.get("FRAMELEDGER_BENCH_CODE") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)

from annotator.base.bundles import reference_bundle  # noqa: E402
from annotator.base.grading import sandbox, sandbox_host  # noqa: E402
from retrieval.synthetic import SyntheticConfig, generate_corpus, write_corpus  # noqa: E402
from scoring import score_submission  # noqa: E402
from tests.grading.sandbox_helpers import bundle  # noqa: E402

RECORD = {"video_id": "v1", "duration": 60.0, "grid": {"step": 2.0}}


def direct_env(job: sandbox.Job) -> dict:  # the job's folders as they are on the host
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(job.tmp),
        "TMPDIR": str(job.tmp),
        "XDG_CACHE_HOME": str(job.cache),
        "RETRIEVAL_CACHE_DIR": str(job.cache),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
    }


def direct(job: sandbox.Job, argv: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(argv, env=direct_env(job), check=True, capture_output=True, cwd=job.tmp)
    return time.monotonic() - started


def overhead(parent: Path, uid: int, count: int) -> tuple[float, float]:
    job, _ = sandbox.prepare(parent / "empty", bundle(build="exit 0\n"), [RECORD], {}, [], requests_per_call=1, uid=uid)
    limits = sandbox.Limits(build_seconds=60)
    inside, outside = [], []
    for _ in range(count):
        started = time.monotonic()
        with sandbox.job_disk(job, limits):
            stage = sandbox.run_stage(job, "build", ["/job/app/build.sh"], 60, limits, index_writable=True)
        inside.append(time.monotonic() - started)
        assert stage.outcome == "ok", stage.stderr
        with sandbox.job_disk(job, limits):  # the folders the direct run uses; not timed
            outside.append(direct(job, [str(job.app / "build.sh")]))
    sandbox.cleanup(parent / "empty")
    return statistics.median(inside), statistics.median(outside)


HOLD = """python3 - <<'PY'
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
end = time.monotonic() + {seconds}
folder = os.environ['TMPDIR'] + '/many'
os.mkdir(folder)
for number in range({entries} - 3):
    os.close(os.open(f'{{folder}}/{{number}}', os.O_WRONLY | os.O_CREAT, 0o600))
with open(os.environ['TMPDIR'] + '/mapped', 'wb') as handle:
    handle.truncate(4096)
descriptor = os.open(os.environ['TMPDIR'] + '/mapped', os.O_RDONLY)
# the same page each time (PROT_READ, MAP_SHARED): neighbours never merge into one mapping
maps = [libc.mmap(None, 4096, 1, 1, descriptor, 0) for _ in range({mappings})]
assert all(address not in (None, 2**64 - 1) for address in maps)
print('holding', len(os.listdir(folder)), 'entries', len(maps), 'mappings', flush=True)
time.sleep(max(end - time.monotonic(), 0))
PY
"""


def worker_cpu(parent: Path, uid: int, seconds: float) -> tuple[float, float, str]:
    """The worker's own CPU seconds (all its threads) and the wall seconds of one stage
    that holds 200,000 entries and 65,000 mappings until ``seconds``."""
    limits = sandbox.Limits(build_seconds=seconds + 60, address_space_bytes=0)
    script = HOLD.format(seconds=seconds, entries=limits.disk_entries, mappings=65_000)
    job, _ = sandbox.prepare(parent / "hold", bundle(build=script), [RECORD], {}, [], requests_per_call=1, uid=uid)
    with sandbox.job_disk(job, limits):
        before = resource.getrusage(resource.RUSAGE_SELF)
        stage = sandbox.run_stage(job, "build", ["/job/app/build.sh"], seconds + 60, limits, index_writable=True)
        after = resource.getrusage(resource.RUSAGE_SELF)
    sandbox.cleanup(parent / "hold")
    assert stage.outcome == "ok", stage.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, stage.seconds, stage.stdout.decode().strip()


def flood_cpu(parent: Path, uid: int, seconds: float) -> tuple[float, float, int, int]:
    """The worker's own CPU seconds and the wall seconds of one stage that writes to stdout
    for ``seconds``; the bytes kept and counted past the cap."""
    limits = sandbox.Limits(build_seconds=seconds + 60)
    script = f"timeout {seconds} sh -c 'while :; do cat /dev/zero; done' 2>/dev/null || true\n"
    job, _ = sandbox.prepare(parent / "flood", bundle(build=script), [RECORD], {}, [], requests_per_call=1, uid=uid)
    with sandbox.job_disk(job, limits):
        before = resource.getrusage(resource.RUSAGE_SELF)
        stage = sandbox.run_stage(job, "build", ["/job/app/build.sh"], seconds + 60, limits, index_writable=True)
        after = resource.getrusage(resource.RUSAGE_SELF)
    sandbox.cleanup(parent / "flood")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, stage.seconds, len(stage.stdout), stage.dropped_bytes


def corpus(folder: Path, videos: int):
    config = SyntheticConfig(n_videos=videos, min_duration=30, max_duration=600, seed=11, split=(0.0, 0.0, 1.0))
    generated = generate_corpus(config)
    files = write_corpus(generated, folder)
    records = [json.loads(line) for line in files.records.read_text().splitlines()]
    features = {r["features"]: files.corpus_dir / r["features"] for r in records}
    requests = [json.loads(line) for line in files.test_requests.read_text().splitlines()]
    asked = {r["query_id"] for r in requests}
    truth = [
        {"query_id": q["query_id"], "video_id": q["video_id"], "intervals": q["intervals"]}
        for q in generated.queries
        if q["query_id"] in asked
    ]
    return records, features, requests, truth


def reference(parent: Path, uid: int, number: int, inputs) -> dict:
    records, features, requests, _ = inputs
    figures = {}
    for way in ("sandboxed", "direct"):
        root = parent / f"{way}-{number}"
        job, calls = sandbox.prepare(
            root, reference_bundle(), records, features, requests, requests_per_call=10**6, uid=uid
        )
        if way == "sandboxed":
            stages, rows = sandbox.run_bundle(job, calls, sandbox.Limits(requests_per_call=10**6), row_cap=10_000_000)
            assert all(s.outcome == "ok" for s in stages), [(s.name, s.stderr[-500:]) for s in stages]
            figures[way] = {"build": stages[0].seconds, "run": stages[1].seconds, "rows": rows}
        else:
            with sandbox.job_disk(job, sandbox.Limits()):  # the direct run is root's, on the same folders
                index = str(job.index)
                build = direct(job, [str(job.app / "build.sh"), "--corpus", str(job.corpus), "--index-dir", index])
                run = direct(job, [str(job.app / "run.sh"), "--index-dir", str(job.index), "--queries",
                                   str(job.call_queries(1)), "--output", str(job.call_output(1))])  # fmt: skip
                rows = job.call_output(1).read_bytes()
            figures[way] = {"build": round(build, 3), "run": round(run, 3), "rows": rows}
        sandbox.cleanup(root)
    return figures


def reward(rows: bytes, inputs) -> float:
    records, _, _, truth = inputs
    corpus_params = [{k: r[k] for k in ("video_id", "duration", "grid") if k in r} for r in records]
    return score_submission("moment-utility-v1", {"queries": truth}, rows, corpus=corpus_params).reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stages", type=int, default=20)
    parser.add_argument("--videos", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hold", type=float, default=60.0, help="seconds of the stage that holds much (0: skip)")
    parser.add_argument("--flood", type=float, default=20.0, help="seconds a stage floods stdout (0: skip)")
    args = parser.parse_args()
    enforcement = sandbox.probe()
    if not enforcement.ready:
        sys.exit(f"the sandbox is not available here: {enforcement.reason}")
    print(f"sandbox: {enforcement.bwrap}, cgroups {enforcement.cgroups or 'none'}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    parent = Path(tempfile.mkdtemp(prefix="bench-bundle-"))
    try:
        with sandbox_host.uid_lease(
            sandbox.DEFAULT_UIDS, sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))
        ) as uid:
            if args.stages:
                inside, outside = overhead(parent, uid, args.stages)
                print(f"empty stage, median of {args.stages}: sandboxed {inside:.3f} s, direct {outside:.3f} s, "
                      f"overhead {inside - outside:.3f} s per stage")  # fmt: skip
            if args.flood:
                cpu, wall, kept, past = flood_cpu(parent, uid, args.flood)
                print(f"stage flooding stdout for {args.flood:.0f} s: worker CPU {cpu:.3f} s over {wall:.1f} s wall "
                      f"({100 * cpu / wall:.2f} %); {kept} bytes kept, {past} counted past the cap")  # fmt: skip
            if args.hold:
                cpu, wall, held = worker_cpu(parent, uid, args.hold)
                print(f"stage holding much ({held}): worker CPU {cpu:.3f} s over {wall:.1f} s "
                      f"wall, {100 * cpu / wall:.2f} %")  # fmt: skip
            if not args.rounds:
                print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
                return
            inputs = corpus(parent / "data", args.videos)
            hours = sum(r["duration"] for r in inputs[0]) / 3600
            print(f"corpus: {len(inputs[0])} videos, {hours:.2f} h, {len(inputs[2])} requests")
            results = []
            for number in range(args.rounds):
                figures = reference(parent, uid, number, inputs)
                results.append(figures)
                same = figures["sandboxed"]["rows"] == figures["direct"]["rows"]
                print(
                    f"round {number + 1}: build sandboxed {figures['sandboxed']['build']:.2f} s / direct "
                    f"{figures['direct']['build']:.2f} s; run {figures['sandboxed']['run']:.2f} s / "
                    f"{figures['direct']['run']:.2f} s; rows identical: {same}"
                )
                assert same, "the sandbox changed the reference bundle's rows"
            for stage in ("build", "run"):
                a = statistics.median(r["sandboxed"][stage] for r in results)
                b = statistics.median(r["direct"][stage] for r in results)
                print(f"reference {stage}: median sandboxed {a:.2f} s, direct {b:.2f} s, difference {a - b:+.2f} s")
            scores = {way: reward(results[0][way]["rows"], inputs) for way in ("sandboxed", "direct")}
            print(f"reference reward: sandboxed {scores['sandboxed']:.6f}, direct {scores['direct']:.6f}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        sandbox.cleanup(parent)


if __name__ == "__main__":
    main()
