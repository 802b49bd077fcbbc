"""The maintainers' pages across packets: time and queries of the dashboard and the
audit view as the installation grows.

Run: ``.venv/bin/python bench/dashboard.py [--packets 300] [--events 4] [--database-url URL]``.

On a fresh database (default a temporary SQLite file; a ``postgres://`` URL is dropped
and re-created) it makes one project with four annotators and two adjudicators, one
packet per video by round robin, ``--events`` events on each side of every packet
through ``do_add_event`` (so the audit log holds one entry per write), freezes both
sides of every third packet, then renders ``/dashboard/``, ``/dashboard/?state=frozen``
and ``/audit/`` (its 500 newest entries) with a signed-in maintainer, ``--rounds`` times
each, and prints the median milliseconds and the number of SQL queries per page.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from integrity import setup  # noqa: E402

ATTESTATION = "I labelled this video alone, from the video only."


def build(packets: int, events: int) -> object:
    from annotator.actions.ledgers import do_add_event, do_freeze_ledger
    from annotator.actions.projects import do_create_project, do_create_project_packets
    from annotator.models import Ledger, TaskKind
    from tests.factories import make_ready_video, make_user

    maintainer = make_user("maintainer", maintainer=True)
    annotators = [make_user(f"annotator{i}") for i in range(4)]
    adjudicators = [make_user(f"adjudicator{i}") for i in range(2)]
    project = do_create_project(
        actor=maintainer, title="bench", task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotators=annotators, adjudicators=adjudicators,
    )  # fmt: skip
    videos = [make_ready_video(f"video {i}") for i in range(packets)]
    made = do_create_project_packets(actor=maintainer, project=project, videos=videos)
    for number, packet in enumerate(made):
        for ledger in Ledger.objects.filter(packet=packet).select_related(
            "annotator", "packet__task_kind", "packet__video"
        ):
            for k in range(events):
                data = {"verb": "take", "nouns": ["cup"], "start_frame": 10 + 40 * k, "end_frame": 30 + 40 * k}
                do_add_event(ledger, data, actor=ledger.annotator, expected_version=k)
            if number % 3 == 0:
                do_freeze_ledger(ledger, actor=ledger.annotator, attestation=ATTESTATION, expected_version=events)
    return maintainer


def measure(client, url: str, rounds: int) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times = []
    for _ in range(rounds):
        with CaptureQueriesContext(connection) as queries:
            start = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times), len(queries)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packets", type=int, default=300)
    parser.add_argument("--events", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        setup(args.database_url or f"sqlite:///{tmp}/bench.sqlite3")
        from django.test import Client

        from annotator.models import AuditEntry

        start = time.perf_counter()
        maintainer = build(args.packets, args.events)
        built = time.perf_counter() - start
        client = Client()
        client.force_login(maintainer)
        print(f"{args.packets} packets, {args.events} events per side, {AuditEntry.objects.count()} audit entries "
              f"(built in {built:.1f} s), load average {os.getloadavg()[0]:.2f}")  # fmt: skip
        for url in ["/dashboard/", "/dashboard/?state=frozen", "/audit/", "/audit/?operation=freeze_ledger"]:
            median, queries = measure(client, url, args.rounds)
            print(f"GET {url:34} median {median:8.1f} ms   {queries:3d} queries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
