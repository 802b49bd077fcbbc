"""Annotation API benchmark: many annotators saving events at once, on PostgreSQL.

Run: ``.venv/bin/python bench/annotation_api.py [--annotators 50] [--events 40]``.

It creates a fresh PostgreSQL database (``--database-url``, default
``postgres://postgres@127.0.0.1:5432/frameledger_bench``; dropped and re-created),
migrates it, makes one packet per pair of annotators, starts the real ASGI server
(Daphne) on a free local port, and runs one thread per annotator. Each thread reads
its own ledger's ETag, then saves events one after another with ``If-Match`` (token
authentication, keep-alive connection), as the autosave of the workspace does.

``--interval`` sets the pause between one annotator's saves (uniformly 0.5x-1.5x of it,
seeded): 1 s models fifty people each saving every second, faster than anyone labels;
0 is a closed loop that measures the server's saturation throughput instead.

It prints save latency p50/p95/p99 and throughput, then counts the events in the
database: every accepted save must be there (zero lost writes) and every ledger's
version must equal its event count. Budget (DESIGN.md): p95 <= 100 ms, zero lost writes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def recreate_database(url: str) -> None:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = url.replace(parsed.path, "/postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def prepare(annotators: int) -> list[tuple[int, str]]:
    """(packet id, token) per annotator."""
    setup_django()
    from django.contrib.auth.models import Group, User

    from annotator.actions.packets import do_create_packet
    from annotator.actions.tokens import do_issue_token
    from annotator.models import TaskKind, Video

    maintainer = User.objects.create_user("bench-maintainer")
    maintainer.groups.add(Group.objects.get(name="maintainers"))
    kind = TaskKind.objects.get(slug="action-ledger")
    video = Video.objects.create(
        title="bench", sha256="0" * 64, status=Video.Status.READY, frame_rate_num=24, frame_rate_den=1,
        frame_count=25692, duration=1070.5,
    )  # fmt: skip
    seats = []
    for number in range(0, annotators, 2):
        a, b, adjudicator = (User.objects.create_user(f"bench-{role}-{number}") for role in ("a", "b", "adj"))
        packet = do_create_packet(
            actor=maintainer, title=f"bench {number}", video=video, task_kind=kind,
            annotator_a=a, annotator_b=b, adjudicator=adjudicator,
        )  # fmt: skip
        seats += [(packet.pk, do_issue_token(a)[1]), (packet.pk, do_issue_token(b)[1])]
    return seats[:annotators]


def annotator(port: int, packet_id: int, token: str, events: int, interval: float, start, out: dict) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    conn.request("GET", f"/api/packets/{packet_id}/ledger/", headers=headers)
    response = conn.getresponse()
    response.read()
    etag = response.getheader("ETag")
    latencies, accepted, failures = [], 0, []
    pauses = random.Random(packet_id * 7 + len(token)).uniform
    start.wait()
    for k in range(events):
        if interval:
            time.sleep(pauses(0.5, 1.5) * interval)
        body = json.dumps({"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5}})
        began = time.perf_counter()
        conn.request(
            "POST", f"/api/packets/{packet_id}/ledger/events/", body=body, headers={**headers, "If-Match": etag}
        )
        response = conn.getresponse()
        payload = response.read()
        latencies.append(time.perf_counter() - began)
        if response.status == 201:
            accepted += 1
            etag = response.getheader("ETag")
        else:
            failures.append((response.status, payload[:200]))
    conn.close()
    out[token] = {"latencies": latencies, "accepted": accepted, "failures": failures, "packet": packet_id}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--events", type=int, default=40, help="saves per annotator")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between one annotator's saves")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/frameledger_bench")
    args = parser.parse_args()

    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "DJANGO_SETTINGS_MODULE": "deploy.settings",
        "DJANGO_SECRET_KEY": "bench-only",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    recreate_database(args.database_url)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO_ROOT, env=env, check=True)
    seats = prepare(args.annotators)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "deploy.asgi:application"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        results: dict = {}
        barrier = threading.Barrier(len(seats) + 1)
        threads = [
            threading.Thread(
                target=annotator, args=(port, packet_id, token, args.events, args.interval, barrier, results)
            )
            for packet_id, token in seats
        ]
        for thread in threads:
            thread.start()
        barrier.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
    finally:
        server.terminate()
        server.wait(timeout=20)

    from annotator.models import Ledger, LedgerEvent

    latencies = sorted(x for r in results.values() for x in r["latencies"])
    accepted = sum(r["accepted"] for r in results.values())
    failures = [f for r in results.values() for f in r["failures"]]
    stored = LedgerEvent.objects.filter(ledger__packet__title__startswith="bench").count()
    consistent = all(ledger.version == ledger.events.count() for ledger in Ledger.objects.all())

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    print(
        f"annotators: {len(seats)}, saves each: {args.events}, pause between saves: {args.interval} s, "
        "server: daphne (one process), PostgreSQL"
    )
    print(f"saves: {len(latencies)} in {wall:.2f} s = {len(latencies) / wall:.0f} saves/s")
    print(f"latency ms: p50 {pct(0.50):.1f}  p95 {pct(0.95):.1f}  p99 {pct(0.99):.1f}  "
          f"mean {statistics.fmean(latencies) * 1000:.1f}  max {latencies[-1] * 1000:.1f}")  # fmt: skip
    print(f"accepted {accepted}, refused {len(failures)}, stored {stored}, lost writes {accepted - stored}")
    print(f"every ledger's version equals its event count: {consistent}")
    if failures:
        print("first refusal:", failures[0])


if __name__ == "__main__":
    main()
