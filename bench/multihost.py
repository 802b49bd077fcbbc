"""The multi-host drill (``bin/run-multihost``; docs/deploy.md, "Multi-host drill").

Eight network namespaces as hosts (``deploy/multihost.py``): ``db`` (its own PostgreSQL cluster
and Redis), ``web1``/``web2`` (gunicorn + uvicorn), ``nginx`` in front of both, ``worker1``/
``worker2`` (a Celery worker on the default, ingest and scoring queues each; the one beat on
``worker2``), ``bundles`` (the bundles queue as root, its sandbox jobs folder in its own ``var/``),
and ``client``, which reaches the installation only through nginx's address. Then:

1. the load test: ``bench/locustfile.py`` (``bench/load.py``'s scenario) with ``--annotators``
   for ``--seconds``, and its lost-write count against the db host's database;
2. an upload of ``--video-seconds`` of video whose proxy chunks (``--chunk-frames``) are
   encoded on both worker hosts: the ingest real-time factor and the split;
3. a scoring run, and the reference bundle submitted over the API to a moment version and run
   in the sandbox on the ``bundles`` host (its stage times, outcome and reward);
4. a second upload, and ``worker1`` killed (every process of its namespace) as soon as it
   encodes a chunk: the seconds until the job is done on ``worker2`` (the beat's sweep re-queues
   the chunk whose lease, ``--lease-seconds``, expired);
5. ``verify_integrity``;
6. with ``--stack-database-url``: the same load on ``bin/run-stack``'s one-machine topology
   (``bench/load.py``'s ``stack`` run) right after, for the figures side by side.

Bounded: ``--timeout`` seconds in all (SIGALRM), and every namespace, mount and process goes
with the layout on any exit, Ctrl-C and SIGTERM included. Prints one JSON object at the end.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from deploy import multihost  # noqa: E402

PY = sys.executable
SOLUTION = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/calibration/rollouts"


class Stop(Exception):
    pass


def _stop(signum, frame):
    raise Stop(signal.Signals(signum).name)


def chunk_counts(layout: multihost.Layout, hosts: list[str]) -> dict:
    pattern = re.compile(r"Task annotator\.ingest_chunk\[[0-9a-f-]+\] succeeded")
    return {h: len(pattern.findall(layout.log(h, "worker-main"))) for h in hosts}


def client_call(layout, client, env, *args: str, timeout: float = 900) -> dict:
    out = layout.run(client, [PY, "-m", "deploy.multihost_client", *args], env, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def drill(args, layout: multihost.Layout) -> dict:
    from annotator.base.media import synthetic

    report: dict = {"load_before": Path("/proc/loadavg").read_text().strip()}
    hosts = [("db", 2), ("nginx", 5), ("web1", 11), ("web2", 12), ("worker1", 21), ("worker2", 22)]
    hosts += [("bundles", 23), ("client", 100)]
    h = {name: layout.add_host(name, n) for name, n in hosts}
    database_url, redis_url = multihost.start_db(layout, h["db"])
    env = multihost.app_env(
        layout,
        database_url,
        redis_url,
        h["nginx"].address,
        FRAMELEDGER_INGEST_CHUNK_FRAMES=str(args.chunk_frames),
        FRAMELEDGER_INGEST_LEASE_SECONDS=str(args.lease_seconds),
        FRAMELEDGER_INGEST_SWEEP_SECONDS=str(max(2, args.lease_seconds // 4)),
        FRAMELEDGER_INGEST_REMUX_FIRST="0",
    )
    plan = layout.dir / "plan.json"
    layout.run(h["web1"], [PY, "bench/load.py", "_prepare", str(args.annotators), "20", str(plan)], env, 600)
    passwords = dict(
        re.findall(r"^\s+(\w+)\s+(\S+)$", layout.run(h["web1"], [PY, "manage.py", "seed_demo"], env), re.M)
    )
    (layout.dir / "passwords.json").write_text(json.dumps(passwords))
    for web in ("web1", "web2"):
        multihost.start_web(layout, h[web], env, workers=args.web_workers)
    multihost.start_nginx(layout, h["nginx"], env, [h["web1"], h["web2"]])
    for worker in ("worker1", "worker2"):
        multihost.start_worker(layout, h[worker], env, "frameledger,ingest,scoring", "main")
    multihost.start_beat(layout, h["worker2"], env)
    multihost.start_bundles_worker(layout, h["bundles"], env)
    base = f"http://{h['nginx'].address}"
    multihost.wait_http(layout, h["client"], f"{base}/readyz")
    pw = str(layout.dir / "passwords.json")

    # 1. load
    locust = (
        "import json, sys; from pathlib import Path; from bench.load import run_locust\n"
        "m = run_locust(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]), 'mh')\n"
        "print(json.dumps(m))"
    )
    out = layout.run(h["client"], [PY, "-c", locust, base, str(plan), str(args.annotators), str(args.seconds),
                                   str(layout.dir)], env, args.seconds + 300)  # fmt: skip
    measured = json.loads(out.strip().splitlines()[-1])
    accepted = measured["result"].get("accepted", {})
    (layout.dir / "accepted.json").write_text(json.dumps(accepted))
    lost = (
        "import json, sys; from bench import load\n"
        "print(json.dumps(load.lost_writes(dict(__import__('os').environ), json.load(open(sys.argv[1])))))"
    )
    writes = json.loads(
        layout.run(h["web1"], [PY, "-c", lost, str(layout.dir / "accepted.json")], env).splitlines()[-1]
    )
    rows = measured["rows"]
    report["load"] = {
        "annotators": args.annotators,
        "seconds": args.seconds,
        "save_new_p95_ms": rows.get("save: new event", {}).get("p95"),
        "save_edit_p95_ms": rows.get("save: edit", {}).get("p95"),
        "requests": rows.get("Aggregated", {}).get("count"),
        "failures": rows.get("Aggregated", {}).get("failures"),
        "writes": writes,
    }

    # 2. an upload encoded on both worker hosts
    frames = int(args.video_seconds * 30000 / 1001)
    video = synthetic.write_video(layout.dir / "long.mp4", "h264-2997-gop12", frames, width=640, height=360)
    before = chunk_counts(layout, ["worker1", "worker2"])
    up = client_call(layout, h["client"], env, "upload", base, pw, str(video))
    after = chunk_counts(layout, ["worker1", "worker2"])
    report["ingest"] = {
        "video_seconds": args.video_seconds,
        "frames": frames,
        "chunk_frames": args.chunk_frames,
        "status": up["job"]["status"],
        "upload_seconds": up["upload_seconds"],
        "ingest_seconds": up["ingest_seconds"],
        "real_time_factor": round(args.video_seconds / up["ingest_seconds"], 2) if up["ingest_seconds"] else None,
        "chunks_by_host": {k: after[k] - before[k] for k in after},
        "range_206": up["range_status"] == 206,
    }

    # 3. scoring
    solution = sorted(SOLUTION.glob("*.solution.json"))[0]
    report["scoring"] = client_call(layout, h["client"], env, "score", base, pw, str(solution))

    # 3b. the reference bundle, run in the sandbox on the bundles host (its jobs folder in its own
    # var/; it sees the web hosts' files only through the shared media: the features)
    moment = multihost.moment_version(layout, h["web1"], env)
    ran = client_call(layout, h["client"], env, "bundle", base, pw, str(moment["version"]))
    worker_log = layout.log("bundles", "worker-bundles")
    report["bundle"] = {
        **{k: ran[k] for k in ("status", "outcome", "reward", "queue", "seconds")},
        "stage_seconds": {s["name"]: s.get("seconds") for s in ran["stages"]},
        "rows": {s["name"]: s.get("rows") for s in ran["stages"] if "rows" in s},
        "enforcement": ran["enforcement"],
        "ran_on_bundles_host": "annotator.run_bundle[" in worker_log and "succeeded" in worker_log,
        "job_folders_left": [p.name for p in (h["bundles"].dir / "var/sandbox").glob("bundle-*")],
        "sandbox_folder_on_other_hosts": [
            n for n in ("web1", "web2", "worker1", "worker2") if (h[n].dir / "var/sandbox").exists()
        ],  # fmt: skip
    }
    if ran["status"] != "done":
        report["bundle"]["stderr_tail"] = ran["stderr_tail"]
        report["bundle"]["worker_log_tail"] = worker_log[-3000:]

    # 4. kill worker1 mid-ingest
    before = chunk_counts(layout, ["worker1", "worker2"])
    started = client_call(layout, h["client"], env, "start", base, pw, str(video))
    received = re.compile(r"Task annotator\.ingest_chunk\[[0-9a-f-]+\] received")
    succeeded = re.compile(r"Task annotator\.ingest_chunk\[[0-9a-f-]+\] succeeded")

    def in_flight() -> int:  # chunks worker1 has taken and not finished
        log = layout.log("worker1", "worker-main")
        return len(received.findall(log)) - len(succeeded.findall(log))

    deadline = time.monotonic() + 300
    while in_flight() <= 0:
        if time.monotonic() > deadline or started.get("done"):
            raise RuntimeError("worker1 never took a chunk of the second upload")
        time.sleep(0.05)
    time.sleep(0.3)  # mid-chunk
    flight = in_flight()
    killed_at = time.monotonic()
    killed = h["worker1"].kill()
    job = client_call(layout, h["client"], env, "wait", base, pw, str(started["job"]), "600")
    recovered = time.monotonic() - killed_at
    after = chunk_counts(layout, ["worker1", "worker2"])
    report["kill"] = {
        "processes_killed": killed,
        "chunks_in_flight_on_worker1_at_kill": flight,
        "status": job["status"],
        "seconds_from_kill_to_done": round(recovered, 1),
        "lease_seconds": args.lease_seconds,
        "chunks_by_host_after_start": {k: after[k] - before[k] for k in after},
        "message": job.get("message"),
    }

    # 5. integrity
    report["verify_integrity"] = layout.run(h["web2"], [PY, "manage.py", "verify_integrity"], env).strip()
    report["load_after"] = Path("/proc/loadavg").read_text().strip()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--video-seconds", type=float, default=180)
    parser.add_argument("--chunk-frames", type=int, default=900)
    parser.add_argument("--lease-seconds", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=1500, help="the whole drill, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the layout's folder (logs) afterwards")
    parser.add_argument("--stack-database-url", default=None, help="also the one-machine stack's load run")
    parser.add_argument("--stack-redis-url", default="redis://127.0.0.1:6379/2")
    parser.add_argument("--tag", default=None, help="namespace name prefix (bin/run-multihost passes one)")
    args = parser.parse_args()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(signum, _stop)
    signal.alarm(args.timeout)
    started = time.monotonic()
    with multihost.Layout(tag=args.tag, keep=args.keep) as layout:
        print(f"layout {layout.tag} in {layout.dir}", flush=True)
        try:
            report = drill(args, layout)
        except Stop as stop:
            report = {"stopped": str(stop)}
        finally:
            signal.alarm(0)
    if args.stack_database_url and "stopped" not in report:
        from bench import load

        one = argparse.Namespace(database_url=args.stack_database_url, redis_url=args.stack_redis_url,
                                 submissions=20, seconds=args.seconds, web_workers=args.web_workers)  # fmt: skip
        m = load.one_run(one, "stack", args.annotators, "stack")
        rows = m["rows"]
        report["stack_load"] = {
            "save_new_p95_ms": rows.get("save: new event", {}).get("p95"),
            "save_edit_p95_ms": rows.get("save: edit", {}).get("p95"),
            "requests": rows.get("Aggregated", {}).get("count"),
            "failures": rows.get("Aggregated", {}).get("failures"),
            "writes": m["writes"],
            "load_after": Path("/proc/loadavg").read_text().strip(),
        }
    report["wall_seconds"] = round(time.monotonic() - started)
    report["namespaces_left"] = [n for n in multihost.namespaces() if n.startswith(layout.tag + "-")]
    print(json.dumps(report, indent=2))
    if "stopped" in report or report["namespaces_left"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
