"""Every page's cost as one installation grows ×1 → ×10 → ×100 (issue 38), side by side.

Run: ``.venv/bin/python bench/scale.py [--sizes 1,10,100] [--rounds 5] [--database-url URL]``.

One database (default a temporary SQLite file; a ``postgres://`` URL is dropped and made
again) is grown through the application's own write paths (``do_invite_person``,
``do_create_project``, ``do_create_project_packets``, ``do_add_event``, ``do_freeze_ledger``,
``do_build_union``, ``do_decide_item``, ``do_publish_adjudicated_version``,
``do_upload_submissions``, ``do_start_scoring_run`` + ``do_score_batch``) to each size in turn,
and measured there. At ×s (interpolated between ×1 and ×100):

* people 10 → 500, projects 1 → 100, packets 12 → 1,005 (every one with an event on side A,
  one in 20 frozen, unioned, decided and published), audit entries as those writes make them;
* one packet whose two ledgers hold 100 → 5,000 events each (written one ``do_add_event`` at
  a time; B differs from A on one event in ten): the annotator's workspace API and a save
  are measured on it unfrozen, then it is frozen, unioned, decided and published;
* one leaderboard (a provisional GTEA version) with 100 → 10,000 submissions, all scored.

Per page or API, for the person who opens it (maintainer, annotator, adjudicator):
median and p95 of ``--rounds`` requests (ms), SQL queries of one request, and the peak of
Python memory allocated during one request (``tracemalloc``, MB, measured apart from the
timed rounds). The one-shot writes (freeze, union build, a decision (median of all),
publish, export, scoring run, ``verify_integrity``) are timed once each; on PostgreSQL also
the backup (``deploy.backup``), a restore into a new database and ``verify_integrity
--expect-head`` on it.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from integrity import setup  # noqa: E402

ATTESTATION = "I labelled this video alone, from the video only."
LABELS = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"
FRAMES = 40 * 5000 + 100


def at(scale: int, low: int, high: int) -> int:
    """The figure at ×``scale``: ``low`` at ×1, ``high`` at ×100, linear between."""
    return round(low + (high - low) * (scale - 1) / 99)


@dataclass
class World:
    maintainer: object = None
    annotators: list = field(default_factory=list)
    adjudicators: list = field(default_factory=list)
    projects: list = field(default_factory=list)
    people: int = 0
    packets: int = 0
    submissions: int = 0
    grading_packet: object = None
    version: object = None
    videos: int = 0


def event(k: int, verb: str = "take") -> dict:
    return {"verb": verb, "nouns": ["cup"], "start_frame": 40 * k, "end_frame": 40 * k + 10}


def timed(func):
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    reset_queries()  # the query log keeps 9,000 entries: counted from a full log, a count reads 0
    with CaptureQueriesContext(connection) as queries:
        began = time.perf_counter()
        result = func()
        elapsed = (time.perf_counter() - began) * 1000
    return result, elapsed, len(queries)


def peak_mb(func) -> float:
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def video(world: World, title: str):
    from tests.factories import make_ready_video

    world.videos += 1
    return make_ready_video(f"{title} {world.videos}", frame_count=FRAMES)


def grow_people_and_projects(world: World, scale: int) -> None:
    from annotator.actions.people import do_invite_person
    from annotator.actions.projects import do_create_project
    from annotator.models import TaskKind

    while world.people < at(scale, 10, 500):
        do_invite_person(actor=world.maintainer, username=f"person{world.people}", roles=["annotator"])
        world.people += 1
    kind = TaskKind.objects.get(slug="action-ledger")
    while len(world.projects) < at(scale, 1, 100):
        world.projects.append(
            do_create_project(
                actor=world.maintainer, title=f"project {len(world.projects)}", task_kind=kind,
                annotators=world.annotators, adjudicators=world.adjudicators,
            )
        )  # fmt: skip


def adjudicate(packet, adjudicator) -> list[float]:
    """Build, decide (every item not agreed), publish: the decision times (ms)."""
    from annotator.actions.adjudication import do_decide_item
    from annotator.actions.union import do_build_union
    from annotator.actions.versions import do_publish_adjudicated_version
    from annotator.reads import access

    union = do_build_union(packet, actor=adjudicator)
    times = []
    for item in union.items.exclude(status="agreed").order_by("position"):
        began = time.perf_counter()
        _, fresh = access.access_union_item(adjudicator, packet.pk, item.position)
        do_decide_item(fresh, actor=adjudicator, action="take_a" if fresh.a_value else "drop", rationale="checked")
        times.append((time.perf_counter() - began) * 1000)
    do_publish_adjudicated_version(packet, actor=adjudicator)
    return times


def fill(packet, count: int, *, differ_every: int = 10, freeze: bool = False):
    from annotator.actions.ledgers import do_add_event, do_freeze_ledger
    from annotator.models import Ledger

    ledgers = Ledger.objects.filter(packet=packet).select_related("annotator", "packet__task_kind", "packet__video")
    for ledger in ledgers:
        for k in range(ledger.version, count):
            verb = "put" if ledger.side == "B" and k % differ_every == 0 else "take"
            do_add_event(ledger, event(k, verb), actor=ledger.annotator, expected_version=k)
        if freeze:
            do_freeze_ledger(ledger, actor=ledger.annotator, attestation=ATTESTATION, expected_version=count)


def grow_packets(world: World, scale: int) -> None:
    from annotator.actions.ledgers import do_add_event
    from annotator.actions.projects import do_create_project_packets
    from annotator.models import Ledger

    target = at(scale, 12, 1005)
    while world.packets < target:
        project = world.projects[world.packets % len(world.projects)]
        count = min(50, target - world.packets)
        made = do_create_project_packets(
            actor=world.maintainer, project=project, videos=[video(world, "clip") for _ in range(count)]
        )
        for packet in made:
            if world.packets % 20 == 0:
                fill(packet, 2, differ_every=2, freeze=True)
                adjudicate(packet, packet.adjudicator)
            else:
                ledger = Ledger.objects.select_related("packet__task_kind", "packet__video").get(
                    packet=packet, side="A"
                )
                do_add_event(ledger, event(0), actor=ledger.annotator, expected_version=0)
            world.packets += 1


def grow_submissions(world: World, scale: int) -> None:
    from annotator.actions.grading import do_upload_submissions
    from annotator.base.grading.uploads import byte_cap, make_file

    target = at(scale, 100, 10_000)
    cap = byte_cap(world.grading_packet.task_kind.scorer_id)
    while world.submissions < target:
        batch = []
        for n in range(world.submissions, min(target, world.submissions + 1000)):
            data = json.dumps({"actions": [{**event(n % 600), "verb": "take"}]}).encode()
            batch.append(make_file(f"agent-{n}", f"agent-{n}.json", [data], cap))
        do_upload_submissions(world.grading_packet, batch, actor=world.maintainer)
        world.submissions += len(batch)


def start(world: World) -> None:
    from django.contrib.auth.models import Group, User

    from annotator.actions.packets import do_create_packet
    from annotator.actions.versions import do_import_provisional_version
    from annotator.base.gtea import parse_gtea_labels
    from annotator.models import TaskKind
    from tests.factories import ensure_builtin_rows, make_ready_video

    ensure_builtin_rows()
    world.maintainer = User.objects.create_user("maintainer")
    world.maintainer.groups.add(Group.objects.get(name="maintainers"))
    world.annotators = [User.objects.create_user(f"annotator{i}") for i in range(4)]
    world.adjudicators = [User.objects.create_user(f"adjudicator{i}") for i in range(2)]
    world.grading_packet = do_create_packet(
        actor=world.maintainer, title="leaderboard", video=make_ready_video("GTEA", frame_count=25692),
        task_kind=TaskKind.objects.get(slug="action-ledger"), annotator_a=world.annotators[0],
        annotator_b=world.annotators[1], adjudicator=world.adjudicators[0],
    )  # fmt: skip
    truth = parse_gtea_labels(LABELS.read_text())
    world.version = do_import_provisional_version(
        world.grading_packet, truth, actor=world.maintainer, source="bench", source_sha256="0" * 64
    )


def one_shots(world: World, scale: int) -> tuple[dict, object, object]:  # noqa: PLR0915
    """The large packet of this size: grown, its workspace measured by the caller, then the
    one-shot writes. Returns (figures, the packet, the scoring run)."""
    from django.core.management import call_command

    from annotator.actions.grading import do_score_batch, do_start_scoring_run, run_chunks
    from annotator.actions.ledgers import do_freeze_ledger
    from annotator.actions.projects import do_create_project_packets
    from annotator.actions.union import do_build_union
    from annotator.actions.versions import do_publish_adjudicated_version
    from annotator.models import GroundTruthVersion, Ledger, Submission
    from annotator.reads.export import export_zip

    figures: dict[str, tuple] = {}
    events = at(scale, 100, 5000)
    (packet,) = do_create_project_packets(
        actor=world.maintainer, project=world.projects[0], videos=[video(world, "big")]
    )
    fill(packet, events)
    world.packets += 1
    figures["events per ledger"] = (events,)

    def freeze_both():
        for ledger in Ledger.objects.filter(packet=packet).select_related("annotator"):
            do_freeze_ledger(ledger, actor=ledger.annotator, attestation=ATTESTATION, expected_version=events)

    _, ms, q = timed(freeze_both)
    figures["freeze both ledgers"] = (ms, q)
    union, ms, q = timed(lambda: do_build_union(packet, actor=packet.adjudicator))
    figures["union build"] = (ms, q)
    figures["union items"] = (union.items.count(),)
    decisions = adjudicate_decisions(packet)
    figures["one decision (median / p95)"] = (statistics.median(decisions), p95(decisions), len(decisions))
    version, ms, q = timed(lambda: do_publish_adjudicated_version(packet, actor=packet.adjudicator))
    figures["publish"] = (ms, q)
    version = GroundTruthVersion.objects.get(pk=version.pk)
    _, ms, q = timed(lambda: export_zip(version))
    figures["export (zip)"] = (ms, q)

    def score_all():
        run = do_start_scoring_run(world.version, Submission.objects.filter(packet=world.grading_packet),
                                   actor=world.maintainer, dispatch=False)  # fmt: skip
        for chunk in run_chunks(run):
            do_score_batch(run.pk, chunk)
        return run

    run, ms, q = timed(score_all)
    figures["scoring run"] = (ms, q, world.submissions)

    def verify():
        with redirect_stdout(io.StringIO()) as out:
            try:
                call_command("verify_integrity")
            except SystemExit as stop:
                if stop.code:
                    raise RuntimeError(out.getvalue()[-2000:]) from None

    _, ms, q = timed(verify)
    figures["verify_integrity"] = (ms, q)
    return figures, packet, run


def setup_database(url: str) -> None:
    """An empty PostgreSQL database at ``url`` (dropped first if it exists)."""
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    with psycopg.connect(url.replace(parsed.path, "/postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def backup_restore(scale: int) -> dict:
    """PostgreSQL only (``deploy.backup`` is ``pg_dump``/``pg_restore``): the backup, a restore
    into a new database and a new var folder (the signing key's file shared), and
    ``verify_integrity --expect-head`` there; each timed once, in ms."""
    import subprocess

    from django.conf import settings
    from django.db import connection

    from deploy.backup import backup

    if connection.vendor != "postgresql":
        return {}
    var = Path(os.environ["FRAMELEDGER_VAR_DIR"])
    folder, restored_var = var / f"backup-x{scale}", var / f"restored-x{scale}"
    manifest, ms, _ = timed(lambda: backup(folder))
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20
    figures = {"backup (ms / MB)": (ms, round(size, 1))}
    url = os.environ["DATABASE_URL"]
    restored_url = f"{url}_restored"
    setup_database(restored_url)
    env = {
        **os.environ,
        "DATABASE_URL": restored_url,
        "FRAMELEDGER_VAR_DIR": str(restored_var),
        "FRAMELEDGER_SIGNING_KEY_FILE": settings.FRAMELEDGER_SIGNING_KEY_FILE,
    }
    for name, command in (
        ("restore", [sys.executable, "-m", "deploy.backup", "restore", str(folder)]),
        (
            "verify_integrity on the restore",
            [sys.executable, "manage.py", "verify_integrity", "--no-record", "--expect-head", manifest["audit_head"]],
        ),  # fmt: skip
    ):
        began = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"{name}: {(done.stdout + done.stderr)[-2000:]}")
        figures[f"{name} (ms)"] = ((time.perf_counter() - began) * 1000,)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(restored_var, ignore_errors=True)
    return figures


def adjudicate_decisions(packet) -> list[float]:
    from annotator.actions.adjudication import do_decide_item
    from annotator.models import UnionItem
    from annotator.reads import access

    adjudicator = packet.adjudicator
    times = []
    for position, a_index in (
        UnionItem.objects.filter(union__packet=packet).exclude(status="agreed").values_list("position", "a_index")
    ):
        began = time.perf_counter()
        _, item = access.access_union_item(adjudicator, packet.pk, position)
        do_decide_item(item, actor=adjudicator, action="take_a" if a_index is not None else "drop", rationale="checked")
        times.append((time.perf_counter() - began) * 1000)
    return times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(client, method: str, path: str, rounds: int, body=None) -> tuple:
    """(median ms, p95 ms, queries, peak MB, body KB) of ``rounds`` requests."""
    from tests.factories import body_of

    def send():  # the whole body read, a streamed one too: what a client waits for
        if method == "GET":
            response = client.get(path)
        elif callable(body):
            response = client.post(path, body(), format="json")
        else:
            response = client.post(path, body, format="json")
        return response, body_of(response)

    (response, content), _, queries = timed(send)  # warm-up, and the query count
    if response.status_code >= 400:
        raise RuntimeError(f"{method} {path}: {response.status_code} {content[:300]!r}")
    times = [timed(send)[1] for _ in range(rounds)]
    peak = peak_mb(send)
    return statistics.median(times), p95(times), queries, peak, len(content) / 1024


def requests_of(world: World, packet, run) -> list[tuple[str, str, str, object, object]]:
    """(who, label, method, path, body) of every page and API measured."""
    from annotator.models import Ledger, Project

    version = world.version.pk
    ledger_a = Ledger.objects.get(packet=packet, side="A")
    project = Project.objects.order_by("pk").first().pk
    a, adj = ledger_a.annotator, packet.adjudicator
    rows = [
        ("maintainer", "home page", "GET", "/", None),
        ("maintainer", "packet list API", "GET", "/api/packets/", None),
        ("maintainer", "dashboard", "GET", "/dashboard/", None),
        ("maintainer", "dashboard ?state=published", "GET", "/dashboard/?state=published", None),
        ("maintainer", "people page", "GET", "/people/", None),
        ("maintainer", "projects page", "GET", "/projects/", None),
        ("maintainer", "project page", "GET", f"/projects/{project}/", None),
        ("maintainer", "audit view", "GET", "/audit/", None),
        ("maintainer", "packet page", "GET", f"/packets/{packet.pk}/", None),
        ("maintainer", "packet API", "GET", f"/api/packets/{packet.pk}/", None),
        ("maintainer", "leaderboard API", "GET", f"/api/versions/{version}/leaderboard/", None),
        ("maintainer", "leaderboard CSV", "GET", f"/api/versions/{version}/leaderboard.csv", None),
        ("maintainer", "grading page", "GET", f"/grading/versions/{version}/", None),
        ("maintainer", "scoring-run detail", "GET", f"/api/scoring-runs/{run.pk}/", None),
        ("annotator", "packet list API", "GET", "/api/packets/", None),
        ("annotator", "ledger API (frozen)", "GET", f"/api/packets/{packet.pk}/ledger/", None),
        ("adjudicator", "packet list API", "GET", "/api/packets/", None),
        ("adjudicator", "adjudication page", "GET", f"/packets/{packet.pk}/adjudicate/", None),
        ("adjudicator", "union API", "GET", f"/api/packets/{packet.pk}/union/", None),
    ]
    users = {"maintainer": world.maintainer, "annotator": a, "adjudicator": adj}
    return [(users[who], who, label, method, path, body) for who, label, method, path, body in rows]


def workspace(world: World, scale: int, rounds: int) -> dict:
    """The annotator's workspace on an unfrozen ledger of this size: its API and one save."""
    from annotator.actions.projects import do_create_project_packets
    from annotator.models import Ledger
    from tests.factories import client_for

    (packet,) = do_create_project_packets(
        actor=world.maintainer, project=world.projects[0], videos=[video(world, "ws")]
    )
    world.packets += 1
    events = at(scale, 100, 5000) - 1 - rounds - 1
    fill(packet, max(events, 0))
    ledger = Ledger.objects.select_related("annotator").get(packet=packet, side="A")
    client = client_for(ledger.annotator)
    figures = {("annotator", "ledger API (open)"): measure(client, "GET", f"/api/packets/{packet.pk}/ledger/", rounds)}
    counter = iter(range(10**6, 2 * 10**6))

    def save():
        ledger.refresh_from_db()
        response = client.post(
            f"/api/packets/{packet.pk}/ledger/events/", {"data": event(next(counter) % 4000)},
            format="json", HTTP_IF_MATCH=ledger.etag,
        )  # fmt: skip
        if response.status_code != 201:
            raise RuntimeError(f"save: {response.status_code} {response.content[:300]!r}")
        return response

    times, queries = [], 0
    for _ in range(rounds):
        _, ms, queries = timed(save)
        times.append(ms)
    figures[("annotator", "save an event")] = (statistics.median(times), p95(times), queries, 0.0, 0.0)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,100", help="comma-separated scales, e.g. 1,10")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("FRAMELEDGER_VAR_DIR", tmp)
        setup(args.database_url or f"sqlite:///{tmp}/bench.sqlite3")
        from django.conf import settings

        from annotator.models import AuditEntry
        from tests.factories import client_for

        settings.DEBUG = False
        logging.getLogger("annotator").setLevel(logging.WARNING)
        world = World()
        start(world)
        pages: dict[tuple[str, str], dict[int, tuple]] = {}
        writes: dict[str, dict[int, tuple]] = {}
        loads, built = {}, {}
        for scale in sizes:
            began = time.perf_counter()
            grow_people_and_projects(world, scale)
            grow_packets(world, scale)
            grow_submissions(world, scale)
            figures, packet, run = one_shots(world, scale)
            figures.update(backup_restore(scale))
            built[scale] = time.perf_counter() - began
            for name, value in figures.items():
                writes.setdefault(name, {})[scale] = value
            for user, who, label, method, path, body in requests_of(world, packet, run):
                pages.setdefault((who, label), {})[scale] = measure(client_for(user), method, path, args.rounds, body)
            for key, value in workspace(world, scale, args.rounds).items():
                pages.setdefault(key, {})[scale] = value
            loads[scale] = os.getloadavg()[0]
            writes.setdefault("packets / people / submissions / audit entries", {})[scale] = (
                world.packets, world.people, world.submissions, AuditEntry.objects.count(),
            )  # fmt: skip
        print_table(sizes, pages, writes, loads, built, args)
    return 0


def print_table(sizes, pages, writes, loads, built, args) -> None:
    from django.db import connection

    print(f"database: {connection.vendor}; rounds per request: {args.rounds}; python {sys.version.split()[0]}")
    print("sizes: " + ", ".join(f"×{s} (built in {built[s]:.0f} s, load {loads[s]:.2f})" for s in sizes))
    head = f"{'who':12} {'page / API':30}" + "".join(f" | ×{s:<37}" for s in sizes)
    print()
    print(head)
    print(f"{'':12} {'':30}" + " | median   p95 ms  queries  peak MB    KB" * len(sizes))
    for (who, label), by_size in pages.items():
        cells = []
        for s in sizes:
            v = by_size.get(s)
            cells.append(" | " + (f"{v[0]:7.1f} {v[1]:7.1f} {v[2]:7d} {v[3]:8.1f} {v[4]:6.0f}" if v else " " * 38))
        print(f"{who:12} {label:30}" + "".join(cells))
    print()
    print(f"{'one-shot write':43}" + "".join(f" | ×{s:<24}" for s in sizes))
    for name, by_size in writes.items():
        cells = []
        for s in sizes:
            v = by_size.get(s, ())
            text = " / ".join(f"{x:.1f}" if isinstance(x, float) else str(x) for x in v)
            cells.append(f" | {text:25}")
        print(f"{name:43}" + "".join(cells))
    print("(one-shot figures: ms, queries[, count]; a decision: median ms / p95 ms / decisions)")


if __name__ == "__main__":
    raise SystemExit(main())
