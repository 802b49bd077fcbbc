"""Load test: one Daphne vs the production topology, with a real load generator (locust).

Run (loopback only, bounded in users and time; each invocation stays under 12 minutes):

    flock /tmp/bench.lock .venv/bin/python bench/load.py compare --annotators 50 --seconds 60
    flock /tmp/bench.lock .venv/bin/python bench/load.py sweep --counts 50,100,150,200 --seconds 45

For each run it creates a fresh PostgreSQL database (``--database-url``): ``N`` annotators (two
per packet, all on one ingested synthetic video), an adjudicator watching them, a maintainer, and a
grading packet with the GTEA ground truth marked ready. Sessions are created directly (no password
hashing at the start of the run). It starts the topology:

- ``daphne``: ``python -m deploy.serve`` (one process, as ``bin/run-demo``) and one Celery worker on
  every queue;
- ``stack``: ``deploy.stack`` as ``bin/run-stack`` runs it (nginx, gunicorn with ``--web-workers``
  uvicorn workers, one Celery worker per queue),

then ``locust --headless`` with ``bench/locustfile.py`` (annotators with realistic pacing, the
adjudicator, the maintainer uploading and scoring ``--submissions`` submissions at the same time).
Afterwards it counts every ledger's events and version in the database against the saves locust
saw accepted: a missing event or version step is a lost write. It prints per-endpoint
p50/p95/p99, failures, 5xx and lost writes, and for ``sweep`` the largest annotator count whose
save p95 stays at or under 100 ms. Locust and the servers share the same machine's CPUs.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import secrets
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402

PY = sys.executable
SOLUTION = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/calibration/rollouts"
GTEA_LABELS = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"
SAVE_ENDPOINTS = ("save: new event", "save: edit")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def base_env(args, work: Path) -> dict:
    suffix = secrets.token_hex(4)
    return {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DJANGO_SETTINGS_MODULE": "deploy.settings",
        "DJANGO_SECRET_KEY": "load-bench-" + "k" * 8 + secrets.token_urlsafe(24),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "FRAMELEDGER_VAR_DIR": str(work),
        "FRAMELEDGER_MEDIA_ROOT": str(work / "media"),
        "CHANNELS_PREFIX": f"load-{suffix}",
        "CACHE_PREFIX": f"load-{suffix}",
        "CELERY_QUEUE": f"default-{suffix}",
        "FRAMELEDGER_INGEST_QUEUE": f"ingest-{suffix}",
        "FRAMELEDGER_SCORING_QUEUE": f"scoring-{suffix}",
        "FRAMELEDGER_RETRIEVAL_QUEUE": f"retrieval-{suffix}",
        "FRAMELEDGER_BUNDLE_QUEUE": f"bundles-{suffix}",
        "FRAMELEDGER_INGEST_REMUX_FIRST": "0",
    }


def prepare(env: dict, annotators: int, submissions: int, work: Path) -> Path:
    """A fresh database with the people, packets and sessions of one run; returns the plan file."""
    plan = work / "plan.json"
    result = subprocess.run(
        [PY, __file__, "_prepare", str(annotators), str(submissions), str(plan)],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit("prepare failed:\n" + result.stderr[-4000:])
    return plan


def _prepare(annotators: int, submissions: int, plan_path: Path) -> None:
    from bench.annotation_api import recreate_database

    recreate_database(os.environ["DATABASE_URL"])
    setup_django()
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.files import File
    from django.core.management import call_command

    from annotator.actions.grading import do_mark_version_ready
    from annotator.actions.ingest import do_ingest_video
    from annotator.actions.packets import do_create_packet
    from annotator.base.media import synthetic
    from annotator.models import GroundTruthVersion, Job, Ledger, TaskKind, Video

    call_command("migrate", verbosity=0)
    maintainer = User.objects.create_user("load-maintainer")
    maintainer.groups.add(Group.objects.get(name="maintainers"))
    adjudicator = User.objects.create_user("load-adjudicator")
    kind = TaskKind.objects.get(slug="action-ledger")

    source = synthetic.write_video(Path(os.environ["FRAMELEDGER_VAR_DIR"]) / "load.mp4", "h264-2997-gop12", 600)
    video = Video.objects.create(title="load", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    do_ingest_video(video, job, chunk_frames=0)
    video.refresh_from_db()
    assert video.status == Video.Status.READY, video.error

    def session_for(user) -> dict:
        store = SessionStore()
        store[SESSION_KEY] = str(user.pk)
        store[BACKEND_SESSION_KEY] = "annotator.base.login_guard.ThrottledModelBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.create()
        csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        return {"session": store.session_key, "csrf": csrf}

    seats, packets = [], []
    for number in range(0, annotators, 2):
        a, b = (User.objects.create_user(f"load-{side}-{number}") for side in ("a", "b"))
        packet = do_create_packet(
            actor=maintainer,
            title=f"load {number}",
            video=video,
            task_kind=kind,
            annotator_a=a,
            annotator_b=b,
            adjudicator=adjudicator,
        )
        packets.append(packet.pk)
        for user in (a, b):
            ledger = Ledger.objects.get(packet=packet, annotator=user)
            seats.append({**session_for(user), "packet": packet.pk, "ledger": ledger.pk})
    gtea = Video.objects.create(
        title="GTEA",
        sha256="0" * 64,
        status=Video.Status.READY,
        frame_rate_num=24,
        frame_rate_den=1,
        frame_count=25692,
        duration=1070.5,
    )
    spare = [User.objects.create_user(f"load-grading-{side}") for side in ("a", "b")]
    grading = do_create_packet(
        actor=maintainer,
        title="load grading",
        video=gtea,
        task_kind=kind,
        annotator_a=spare[0],
        annotator_b=spare[1],
        adjudicator=adjudicator,
    )
    call_command("import_gtea_labels", str(GTEA_LABELS), packet=grading.pk, actor="load-maintainer", verbosity=0)
    version = GroundTruthVersion.objects.get(packet=grading, tier="provisional")
    do_mark_version_ready(version, actor=maintainer)
    plan = {
        "annotators": seats[:annotators],
        "adjudicator": session_for(adjudicator),
        "adjudicated_packets": packets[: min(10, len(packets))],
        "maintainer": session_for(maintainer),
        "scoring_packet": grading.pk,
        "submissions": submissions,
        "solution": str(sorted(SOLUTION.glob("*.solution.json"))[0]),
        "proxy_size": video.proxy.size,
        "frame_count": video.frame_count,
        "host": "",
    }
    plan_path.write_text(json.dumps(plan))


def wait_ready(url: str, procs: list[subprocess.Popen], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            raise SystemExit(f"a server process exited while starting ({url})")
        try:
            with urllib.request.urlopen(url, timeout=3) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} not ready after {timeout} s")


def start_topology(name: str, env: dict, work: Path, web_workers: int) -> tuple[str, list[subprocess.Popen]]:
    log = open(work / f"{name}.log", "w")  # noqa: SIM115
    if name == "daphne":
        port = free_port()
        queues = ",".join(
            env[k]
            for k in (
                "CELERY_QUEUE",
                "FRAMELEDGER_INGEST_QUEUE",
                "FRAMELEDGER_SCORING_QUEUE",
                "FRAMELEDGER_RETRIEVAL_QUEUE",
                "FRAMELEDGER_BUNDLE_QUEUE",
            )
        )
        web = subprocess.Popen(
            [PY, "-m", "deploy.serve", "-b", "127.0.0.1", "-p", str(port), "deploy.asgi:application"],
            env=env,
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        worker = subprocess.Popen(
            [PY, "-m", "celery", "-A", "deploy", "worker", "--pool=solo", "-Q", queues, "--loglevel=WARNING"],
            env=env,
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        procs = [web, worker]
    else:
        port = free_port()
        stack_env = {
            **env,
            "FRAMELEDGER_MEDIA_ACCEL_PREFIX": "/_media/",
            "DATABASE_POOL_SIZE": os.environ.get("DATABASE_POOL_SIZE", "4"),
            "PROMETHEUS_MULTIPROC_DIR": str(work / "metrics"),
            "FRAMELEDGER_KEEP_METRICS": "1",
            "DJANGO_SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto:https",
        }
        (work / "metrics").mkdir(exist_ok=True)
        subprocess.run([PY, "manage.py", "collectstatic", "--noinput", "-v0"], env=stack_env, cwd=REPO_ROOT, check=True)
        procs = [
            subprocess.Popen(
                [
                    PY,
                    "-m",
                    "deploy.stack",
                    "--port",
                    str(port),
                    "--web-port",
                    str(free_port()),
                    "--web-workers",
                    str(web_workers),
                    "--dir",
                    str(work / "stack"),
                ],
                env=stack_env,
                cwd=REPO_ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        ]
    url = f"http://127.0.0.1:{port}"
    wait_ready(url + "/readyz", procs)
    return url, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_locust(url: str, plan_path: Path, users: int, seconds: int, work: Path, tag: str) -> dict:
    plan = json.loads(plan_path.read_text())
    plan["host"] = url
    plan_path.write_text(json.dumps(plan))
    result_path = work / f"{tag}-result.json"
    csv_prefix = work / tag
    env = {**os.environ, "LOAD_PLAN": str(plan_path), "LOAD_RESULT": str(result_path)}
    command = [
        str(Path(PY).parent / "locust"),
        "-f",
        str(REPO_ROOT / "bench/locustfile.py"),
        "--headless",
        "-u",
        str(users + 2),
        "-r",
        str(max(5, users // 5)),
        "-t",
        f"{seconds}s",
        "--host",
        url,
        "--csv",
        str(csv_prefix),
        "--only-summary",
        "--stop-timeout",
        "5",
        "--loglevel",
        "WARNING",
    ]
    subprocess.run(
        command,
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=open(work / f"{tag}-locust.log", "w"),
        timeout=seconds + 120,
    )
    rows = {}
    with open(f"{csv_prefix}_stats.csv") as fh:
        for row in csv.DictReader(fh):
            rows[row["Name"]] = {
                "count": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "p50": float(row["50%"] or 0),
                "p95": float(row["95%"] or 0),
                "p99": float(row["99%"] or 0),
                "rps": float(row["Requests/s"] or 0),
            }
    result = json.loads(result_path.read_text()) if result_path.exists() else {}
    return {"rows": rows, "result": result}


def lost_writes(env: dict, accepted: dict) -> dict:
    code = (
        "import django, json, sys; django.setup()\n"
        "from annotator.models import Ledger\n"
        "ledgers = Ledger.objects.filter(packet__title__startswith='load ')\n"
        "rows = {str(x.pk): [x.version, x.events.count()] for x in ledgers}\n"
        "print(json.dumps(rows))"
    )
    out = subprocess.run([PY, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    stored = json.loads(out.strip().splitlines()[-1])
    lost = 0
    for ledger, counts in accepted.items():
        version, events = stored[ledger]
        lost += max(0, counts["add"] - events) + max(0, counts["add"] + counts["edit"] - version)
    return {"lost": lost, "accepted": sum(c["add"] + c["edit"] for c in accepted.values())}


def one_run(args, topology: str, annotators: int, tag: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"load-{tag}-"))
    env = base_env(args, work)
    plan = prepare(env, annotators, args.submissions, work)
    url, procs = start_topology(topology, env, work, args.web_workers)
    try:
        measured = run_locust(url, plan, annotators, args.seconds, work, tag)
    finally:
        stop(procs)
    measured["writes"] = lost_writes(env, measured["result"].get("accepted", {}))
    measured["topology"], measured["annotators"], measured["work"] = topology, annotators, str(work)
    return measured


def print_run(m: dict) -> None:
    r, w = m["result"], m["writes"]
    print(f"\n### {m['topology']}: {m['annotators']} annotators + adjudicator + maintainer ({m['work']})")
    print("| endpoint | requests | failures | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, row in sorted(m["rows"].items()):
        print(
            f"| {name} | {row['count']} | {row['failures']} | {row['p50']:.0f} | {row['p95']:.0f} | {row['p99']:.0f} |"
        )
    print(
        f"accepted saves {w['accepted']}, lost writes {w['lost']}, 5xx {r.get('status_5xx')}, "
        f"sockets opened {r.get('socket_opens')} (errors/reconnects {r.get('socket_errors')} "
        f"{r.get('socket_error_kinds', {})}), "
        f"scoring {r.get('scoring') or r.get('scoring_progress')}"
    )


def save_p95(m: dict) -> float:
    return max(m["rows"].get(name, {"p95": 0})["p95"] for name in SAVE_ENDPOINTS)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_prepare":
        _prepare(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["compare", "sweep"])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--counts", default="50,100,150,200")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/frameledger_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/2")
    args = parser.parse_args()
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}")
    started = time.monotonic()
    if args.mode == "compare":
        for topology in ("daphne", "stack"):
            print_run(one_run(args, topology, args.annotators, topology))
    else:
        best = None
        for count in [int(c) for c in args.counts.split(",")]:
            m = one_run(args, "stack", count, f"sweep{count}")
            print_run(m)
            p95 = save_p95(m)
            print(f"save p95 at {count} annotators: {p95:.0f} ms")
            if p95 <= 100 and m["writes"]["lost"] == 0:
                best = count
        print(f"\nlargest annotator count with save p95 <= 100 ms: {best}")
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}; wall {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
