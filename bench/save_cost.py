"""Server cost of one autosave: SQL queries and CPU milliseconds per request, in process.

Run: ``flock /tmp/bench.lock .venv/bin/python bench/save_cost.py [--saves 300]
[--database-url postgres://postgres@127.0.0.1:5432/frameledger_bench]``.

It creates a fresh PostgreSQL database, one packet, and sends ``--saves`` new-event saves
(``POST /api/packets/<id>/ledger/events/``) then as many edits (``PUT …/events/<uid>/``) through
Django's full request path (the middleware, token authentication, the view, the audit entry),
with ``If-Match``, as the page's autosave does. For each kind it prints the queries per save
(and the statements of one save, with ``--show``) and the CPU time per save (``time.process_time``
around the request, this process only: the test client's own work is included, PostgreSQL's is not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import setup_django  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/frameledger_bench")
    parser.add_argument("--show", action="store_true", help="print the SQL of one save of each kind")
    args = parser.parse_args()
    os.environ.update(
        {
            "DATABASE_URL": args.database_url,
            "DJANGO_SETTINGS_MODULE": "deploy.settings",
            "DJANGO_SECRET_KEY": "bench-only-secret-key-0123456789abcdefghijklmnop",
            "LOG_LEVEL": "WARNING",
            "DJANGO_ALLOWED_HOSTS": "testserver,127.0.0.1",
        }
    )
    from bench.annotation_api import prepare, recreate_database

    recreate_database(args.database_url)
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    (packet_id, token), *_ = prepare(2)

    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    url = f"/api/packets/{packet_id}/ledger/"
    etag = client.get(url)["ETag"]

    def measure(method: str, path_of, body_of) -> tuple[list[int], list[float], list[str]]:
        nonlocal etag
        queries, cpu, sql = [], [], []
        for k in range(args.saves):
            body = json.dumps(body_of(k))
            with CaptureQueriesContext(connection) as captured:
                started = time.process_time()
                response = getattr(client, method)(
                    path_of(k), data=body, content_type="application/json", headers={"If-Match": etag}
                )
                cpu.append((time.process_time() - started) * 1000)
            assert response.status_code in {200, 201}, response.content
            etag = response["ETag"]
            queries.append(len(captured.captured_queries))
            if k == args.saves // 2:
                sql = [q["sql"] for q in captured.captured_queries]
            yield_event = response.json().get("event")
            if yield_event:
                uids.append(yield_event["uid"])
        return queries, cpu, sql

    uids: list[str] = []

    def event(k: int) -> dict:
        return {"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5}}

    add = measure("post", lambda k: url + "events/", event)
    created = list(uids)

    def edit(k: int) -> dict:
        return {"data": {"verb": "put", "nouns": ["plate"], "start_frame": 10 * k + 1, "end_frame": 10 * k + 6}}

    update = measure("put", lambda k: f"{url}events/{created[k]}/", edit)
    print(f"saves of each kind: {args.saves}, PostgreSQL, Django test client (full middleware, token auth)")
    for name, (queries, cpu, sql) in (("new event", add), ("edit", update)):
        cpu_sorted = sorted(cpu)
        print(
            f"{name:9s}: queries per save min {min(queries)} median {statistics.median(queries):g} max {max(queries)}; "
            f"CPU ms per save median {statistics.median(cpu):.2f} p95 {cpu_sorted[int(0.95 * len(cpu))]:.2f}"
        )
        if args.show:
            for statement in sql:
                print("    ", statement[:160])


if __name__ == "__main__":
    main()
