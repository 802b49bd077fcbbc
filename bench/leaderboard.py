"""Leaderboard benchmark: a leaderboard GET with both annotators' ledgers frozen, before
and after the human rows are cached.

Run: ``.venv/bin/python bench/leaderboard.py [--repeat 20]``.

Against the published GTEA ground truth (a provisional version, 25,692 frames at
24 fps), both annotator ledgers hold the published actions (B with every boundary moved
by 6 frames), both frozen. It times ``GET /api/versions/<id>/leaderboard/`` through the
test client, ``--repeat`` times each, interleaved: with the cache emptied before the
request (the two ledgers are scored: what every request cost before the cache) and
right after it (served from the cache), and one ledger's scoring alone. It uses a
fresh SQLite database in a temporary folder unless ``DATABASE_URL`` says otherwise.

``--scale 100,1000,10000``: one leaderboard grown through the app's own writes (uploads of
at most 5,000 files, runs scored in-process against the first 20 GTEA actions) to each size
in turn, and at each: the leaderboard's first page and a later one, the CSV download whole,
the scoring run as the grading page polls it, and a page of its scores. Each request
``--repeat`` times: median and p95 latency, queries, body bytes; then once more for the peak
of Python memory allocated while it ran (tracemalloc, the download read to its end).
``--existing ID`` measures a version grown before as well (its latest run). The same script
runs on an older tree (copy it there) to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402

LABELS = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"
ATTESTATION = "I labelled this video alone, from the video only."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--scale", default="", help="sizes, e.g. 100,1000,10000 (see the module docstring)")
    parser.add_argument("--existing", type=int, default=0, help="with --scale: also a version grown before (its id)")
    args = parser.parse_args()
    if args.scale:
        scale([int(n) for n in args.scale.split(",")], args.repeat, args.existing)
        return
    workdir = Path(tempfile.mkdtemp(prefix="frameledger-bench-leaderboard-"))
    if not os.environ.get("DATABASE_URL"):
        os.environ["FRAMELEDGER_VAR_DIR"] = str(workdir)
    setup_django()
    from django.contrib.auth.models import Group, User
    from django.core.cache import cache
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from annotator.actions.ledgers import do_freeze_ledger
    from annotator.actions.packets import do_create_packet
    from annotator.actions.versions import do_import_provisional_version
    from annotator.base.gtea import parse_gtea_labels
    from annotator.models import Ledger, LedgerEvent, TaskKind, Video
    from annotator.reads import grading as reads

    call_command("migrate", verbosity=0)
    people = [User.objects.create_user(n) for n in ("bench-maintainer", "bench-a", "bench-b", "bench-adjudicator")]
    people[0].groups.add(Group.objects.get(name="maintainers"))
    video = Video.objects.create(title="GTEA (bench)", status="ready", frame_rate_num=24, frame_rate_den=1,
                                 frame_count=25692, duration=25692 / 24)  # fmt: skip
    packet = do_create_packet(
        actor=people[0], title="bench", video=video, task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotator_a=people[1], annotator_b=people[2], adjudicator=people[3],
    )  # fmt: skip
    truth = parse_gtea_labels(LABELS.read_text())
    version = do_import_provisional_version(packet, truth, actor=people[0], source="bench", source_sha256="0" * 64)
    for side, shift, person in (("A", 0, people[1]), ("B", 6, people[2])):
        ledger = Ledger.objects.get(packet=packet, side=side)
        events = [{**e, "start_frame": e["start_frame"] + shift, "end_frame": e["end_frame"] + shift} for e in truth]
        LedgerEvent.objects.bulk_create(LedgerEvent(ledger=ledger, data=e) for e in events)
        do_freeze_ledger(ledger, actor=person, attestation=ATTESTATION, expected_version=ledger.version)
    cache.clear()

    client = APIClient()
    client.force_authenticate(people[0])
    url = f"/api/versions/{version.pk}/leaderboard/"

    def timed() -> float:
        started = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - started
        if response.status_code != 200 or len(response.json()["rows"]) != 2:
            raise SystemExit(f"unexpected leaderboard: {response.status_code} {response.content[:200]!r}")
        return elapsed

    timed()  # warm-up: imports, URL resolver, first queries
    cold, warm = [], []
    for _ in range(args.repeat):  # interleaved, so the machine's load hits both alike
        cache.clear()
        cold.append(timed())  # what every request cost before the cache
        warm.append(timed())
    ledger = Ledger.objects.get(packet=packet, side="B")
    cache.clear()
    started = time.perf_counter()
    reads.human_score(version, "egocentric-f1-v2", ledger)
    one = time.perf_counter() - started
    print(f"GTEA ground truth: {len(truth)} actions; two frozen ledgers of {len(truth)} actions each")
    cold_ms, warm_ms = statistics.median(cold) * 1000, statistics.median(warm) * 1000
    print(f"leaderboard GET, human rows scored (cache empty), median of {args.repeat}: {cold_ms:7.1f} ms")
    print(f"leaderboard GET, human rows cached, median of {args.repeat}:            {warm_ms:7.1f} ms")
    print(f"  ratio scored / cached: {cold_ms / warm_ms:.2f}x")
    print(f"one ledger scored (export + scorer):                            {one * 1000:7.1f} ms")
    print(f"(database in {workdir})" if not os.environ.get("DATABASE_URL") else "")


def scale(sizes: list[int], repeat: int, existing: int = 0) -> None:
    import json
    import random
    import tracemalloc

    if not os.environ.get("DATABASE_URL"):
        os.environ["FRAMELEDGER_VAR_DIR"] = tempfile.mkdtemp(prefix="frameledger-bench-leaderboard-")
    setup_django()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    from annotator.actions import grading
    from annotator.actions.packets import do_create_packet
    from annotator.actions.versions import do_import_provisional_version
    from annotator.base.grading.uploads import byte_cap, make_file
    from annotator.base.gtea import parse_gtea_labels
    from annotator.models import ScoringRun, TaskKind, Video
    from tests.factories import body_of

    call_command("migrate", verbosity=0)
    tag = os.urandom(3).hex()
    people = [User.objects.create_user(f"bench-{n}-{tag}") for n in ("maintainer", "a", "b", "adjudicator")]
    people[0].groups.add(Group.objects.get(name="maintainers"))
    video = Video.objects.create(title="GTEA (bench)", status="ready", frame_rate_num=24, frame_rate_den=1,
                                 frame_count=25692, duration=25692 / 24)  # fmt: skip
    packet = do_create_packet(
        actor=people[0], title=f"scale {tag}", video=video, task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotator_a=people[1], annotator_b=people[2], adjudicator=people[3],
    )  # fmt: skip
    truth = parse_gtea_labels(LABELS.read_text())[:20]
    version = do_import_provisional_version(packet, truth, actor=people[0], source="bench", source_sha256="0" * 64)
    cap, rng = byte_cap(packet.task_kind.scorer_id), random.Random(7)
    client = APIClient()
    client.force_authenticate(people[0])

    def submission(k: int) -> bytes:
        kept = [a for a in truth if rng.random() < 0.8]  # rewards spread, with ties
        return json.dumps({"actions": kept[: rng.randint(0, len(kept))]}).encode()

    def measure(url: str, params=None) -> dict:
        """``repeat`` timed requests, then one more under tracemalloc (which slows Python
        down several times) for the peak of memory allocated while it ran."""
        times, count, size = [], 0, 0
        for _ in range(repeat):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url, params or {})
                body = body_of(response)  # a download read to its end
                times.append(time.perf_counter() - started)
            assert response.status_code == 200, (url, response.status_code, body[:300])
            count, size = len(queries), len(body)
        tracemalloc.start()
        body_of(client.get(url, params or {}))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        times.sort()
        return {"median": statistics.median(times) * 1000, "p95": times[int(0.95 * (len(times) - 1))] * 1000,
                "queries": count, "bytes": size, "peak": peak}  # fmt: skip

    def requests(version_id: int, run) -> dict[str, dict]:
        board = f"/api/versions/{version_id}/leaderboard/"
        later = client.get(board).json().get("next")
        return {
            "leaderboard, first page": measure(board),
            "leaderboard, next page": measure(later) if later else measure(board),
            "leaderboard.csv, whole": measure(f"/api/versions/{version_id}/leaderboard.csv"),
            "scoring run detail": measure(f"/api/scoring-runs/{run.pk}/"),
            "scoring run scores, a page": measure(f"/api/scoring-runs/{run.pk}/scores/"),
        }

    results: dict[int, dict[str, dict]] = {}
    have, run = 0, None
    for size in sizes:
        while have < size:
            count = min(5000, size - have)
            files = [make_file(f"agent-{k:05d}", f"agent-{k:05d}.json", [submission(k)], cap)
                     for k in range(have, have + count)]  # fmt: skip
            created = grading.do_upload_submissions(packet, files, actor=people[0])
            run = grading.do_start_scoring_run(version, created, actor=people[0], dispatch=False)
            for chunk in grading.run_chunks(run, 100):
                grading.do_score_batch(run.pk, chunk)
            have += count
        results[size] = requests(version.pk, run)
        print(f"size {size}: {have} submissions scored; load {os.getloadavg()[0]:.2f}", flush=True)
    if existing:
        old = ScoringRun.objects.filter(version_id=existing).order_by("-pk").first()
        people[0].groups.add(Group.objects.get(name="maintainers"))
        size = client.get(f"/api/versions/{existing}/leaderboard/").json()["count"]
        results[size] = requests(existing, old)
        sizes = [*sizes, size]
        print(f"version {existing}: {size} rows; load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"\n{'request':<42}" + "".join(f"{'x' + str(s // sizes[0]) + ' (' + str(s) + ')':>34}" for s in sizes))
    print(f"{'':<42}" + "".join(f"{'median/p95 ms  queries  KB  peak MB':>34}" for _ in sizes))
    for name in results[sizes[0]]:
        cells = []
        for s in sizes:
            found = results[s][name]
            kb, mb = found["bytes"] / 1024, found["peak"] / 2**20
            cells.append(f"{found['median']:.0f}/{found['p95']:.0f}  {found['queries']:>4}  {kb:>6.0f}  {mb:>6.1f}")
        print(f"{name:<42}" + "".join(f"{c:>34}" for c in cells))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
