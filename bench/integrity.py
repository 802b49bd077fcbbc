"""Tamper-evidence cost: the chained, locked audit append and the verified read.

Run: ``.venv/bin/python bench/integrity.py [--rounds 2000] [--writers 8]``.

On a fresh database (``--database-url``; default a temporary SQLite file; a
``postgres://`` URL is dropped and re-created) it measures, side by side in one
process and interleaved in blocks so that the machine's load hits both alike:

1. one audit entry appended in its own transaction: the plain INSERT the log used to
   do (into a table shaped like the log before the chain), against ``append_entry``
   (lock, chain head, SHA-256, INSERT);
2. ``--writers`` threads appending at once (separate connections): entries/s, and that
   the chain verifies afterwards (no fork, no writer refused);
3. a frozen version read: ``json.loads`` of the stored text as before, against
   ``frozen_document`` (SHA-256 of the text and the manifest, audit record lookup),
   for the published GTEA ground truth;
4. ``manage.py verify_integrity`` over what is then in the database.

It prints per-operation medians (µs) and the ratio new/old for 1 and 3.

``--entries N`` measures instead ``verify_integrity`` at scale: the GTEA version published, then
N signed entries appended (each anchored after commit, as every write is), then
``manage.py verify_integrity --no-record`` run in a process of its own: its wall time and its
peak resident memory (``ru_maxrss`` of the child), for N/10, N/2 and N (linear: ratios near 5 and 2).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402

LABELS = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"


def setup(url: str) -> None:
    if url.startswith("postgres"):
        import psycopg

        parsed = urlparse(url)
        name = parsed.path.lstrip("/")
        with psycopg.connect(url.replace(parsed.path, "/postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = url
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def timed_blocks(funcs: dict, rounds: int, block: int = 50) -> dict[str, list[float]]:
    """Per-call seconds of each function, alternating blocks of ``block`` calls."""
    times: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(0, rounds, block):
        for name, func in funcs.items():
            for _ in range(block):
                began = time.perf_counter()
                func()
                times[name].append(time.perf_counter() - began)
    return times


def report(label: str, times: dict[str, list[float]], old: str, new: str) -> None:
    medians = {name: statistics.median(values) * 1e6 for name, values in times.items()}
    for name, value in medians.items():
        print(f"{label}: {name:28s} median {value:9.1f} µs  ({len(times[name])} calls)")
    print(f"{label}: ratio {new}/{old} = {medians[new] / medians[old]:.2f}")


def plain_audit_model():
    """A table shaped like the audit log before the chain (same columns, indexes and
    foreign keys, no seq/hashes, no triggers): the baseline's INSERT goes there."""
    from django.conf import settings
    from django.db import connection, models

    class PlainAuditEntry(models.Model):
        actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
        at = models.DateTimeField(auto_now_add=True)
        operation = models.CharField(max_length=100)
        object_type = models.CharField(max_length=100)
        object_id = models.CharField(max_length=100)
        packet = models.ForeignKey("annotator.Packet", null=True, on_delete=models.PROTECT, related_name="+")
        hashes = models.JSONField(default=dict)
        details = models.JSONField(default=dict)

        class Meta:
            app_label = "annotator"
            db_table = "bench_plain_audit"

        def __str__(self) -> str:
            return self.operation

    with connection.schema_editor() as editor:
        editor.create_model(PlainAuditEntry)
    return PlainAuditEntry


def bench_append(rounds: int) -> None:
    from django.db import transaction

    from annotator.models.audit_log import append_entry

    plain_model = plain_audit_model()
    entry = {"operation": "bench", "object_type": "bench.Row", "object_id": "1", "packet_id": None}

    def plain():  # what record() did before the chain
        with transaction.atomic():
            plain_model.objects.create(**entry, actor_id=None, hashes={"x": "0" * 64}, details={"side": "A"})

    def chained():
        with transaction.atomic():
            append_entry(**entry, actor_id=None, hashes={"x": "0" * 64}, details={"side": "A"})

    report("audit append", timed_blocks({"plain INSERT": plain, "chained append_entry": chained}, rounds),
           "plain INSERT", "chained append_entry")  # fmt: skip


def publish_gtea():
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from annotator.models import GroundTruthVersion, TaskKind, Video
    from tests.factories import make_packet

    maintainer = User.objects.create_user("maintainer")
    maintainer.groups.add(Group.objects.get(name="maintainers"))
    people = [User.objects.create_user(name) for name in ("annotator_a", "annotator_b", "adjudicator")]
    video = Video.objects.create(
        title="GTEA", sha256="1" * 64, status=Video.Status.READY, frame_rate_num=24, frame_rate_den=1,
        frame_count=25692, duration=1070.5,
    )  # fmt: skip
    packet = make_packet(maintainer, *people, video=video)
    assert TaskKind.objects.filter(slug="action-ledger").exists()
    call_command("import_gtea_labels", str(LABELS), packet=packet.pk, actor="maintainer", stdout=io.StringIO())
    return GroundTruthVersion.objects.get(packet=packet)


def bench_read(rounds: int) -> None:
    from annotator.models import GroundTruthVersion
    from annotator.reads.integrity import frozen_document

    version_id = publish_gtea().pk
    print(f"verified read: version of {len(json.loads(GroundTruthVersion.objects.get().canonical_json)['events'])} "
          f"events, {len(GroundTruthVersion.objects.get().canonical_json):,} bytes")  # fmt: skip

    def plain():
        json.loads(GroundTruthVersion.objects.get(pk=version_id).canonical_json)

    def verified():
        frozen_document(GroundTruthVersion.objects.get(pk=version_id))

    report("verified read", timed_blocks({"load + json.loads": plain, "load + frozen_document": verified}, rounds),
           "load + json.loads", "load + frozen_document")  # fmt: skip


def bench_writers(writers: int, each: int) -> None:
    from django.db import connections, transaction

    from annotator.models.audit_log import append_entry
    from annotator.reads.verify import audit_chain_problems

    start, errors = threading.Barrier(writers + 1), []

    def writer(number: int) -> None:
        try:
            start.wait()
            for i in range(each):
                with transaction.atomic():
                    append_entry(operation="bench_writer", object_type="bench.Writer", object_id=str(number),
                                 packet_id=None, actor_id=None, hashes={}, details={"i": i})  # fmt: skip
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    problems, head = audit_chain_problems()
    print(f"concurrent writers: {writers} threads x {each} entries in {seconds:.2f} s = "
          f"{writers * each / seconds:.0f} entries/s; errors {len(errors)}; chain head seq {head[0]}; "
          f"chain problems {len(problems)}")  # fmt: skip


def bench_verify() -> None:
    from django.core.management import call_command

    out = io.StringIO()
    began = time.perf_counter()
    try:
        call_command("verify_integrity", "--no-record", stdout=out)
    except SystemExit:
        pass
    seconds = time.perf_counter() - began
    lines = out.getvalue().splitlines()
    print(f"verify_integrity: {seconds:.2f} s; {lines[-2] if len(lines) > 1 else lines}")


def append_many(count: int) -> None:
    """``count`` entries through ``append_entry`` (signed, chained, anchored), in batches of
    one transaction each (the bench measures the check, not the appends)."""
    from django.db import transaction

    from annotator.models.audit_log import append_entry

    done = 0
    while done < count:
        with transaction.atomic():
            for _ in range(min(5000, count - done)):
                done += 1
                append_entry(
                    actor_id=None, operation="bench", object_type="annotator.Bench", object_id=str(done),
                    packet_id=None, hashes={"row": f"{done:064x}"}, details={"n": done},
                )  # fmt: skip


def verify_in_child(url: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, peak MiB, summary line) of ``manage.py verify_integrity --no-record`` in a child."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    began = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "manage.py"), "verify_integrity", "--no-record"],
        env={**os.environ, "DATABASE_URL": url}, capture_output=True, text=True, cwd=REPO_ROOT,
    )  # fmt: skip
    seconds = time.perf_counter() - began
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    lines = result.stdout.splitlines()
    summary = lines[-2] if len(lines) > 1 else (result.stdout + result.stderr)[-300:]
    return seconds, cpu, max(usage.ru_maxrss, before) / 1024, summary


def bench_many(url: str, entries: int) -> None:
    publish_gtea()
    for target in (entries // 10, entries // 2, entries):
        from annotator.models import AuditEntry

        append_many(target - AuditEntry.objects.count())
        seconds, cpu, mib, summary = verify_in_child(url)
        count = AuditEntry.objects.count()
        figures = f"{seconds:.1f} s wall, {cpu:.1f} s CPU, peak {mib:.0f} MiB"
        print(f"verify_integrity at {count} entries: {figures}; {summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--each", type=int, default=100)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--entries", type=int, help="measure verify_integrity at this many audit entries instead")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="fl-bench-")
    url = args.database_url or f"sqlite:///{folder}/bench.sqlite3"
    # The bench's own key and anchor log (the child verify_integrity reads the same).
    os.environ.setdefault("FRAMELEDGER_SIGNING_KEY_FILE", f"{folder}/keys/signing-key.pem")
    os.environ.setdefault("FRAMELEDGER_AUDIT_ANCHOR", f"{folder}/anchors/audit-anchors.log")
    os.environ.setdefault("LOG_LEVEL", "WARNING")  # not one annotator.audit line per appended entry
    setup(url)
    from django.db import connection

    print(f"database: {connection.vendor}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.entries:
        bench_many(url, args.entries)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
        return
    bench_append(args.rounds)
    bench_writers(args.writers, args.each)
    bench_read(max(args.rounds // 10, 100))
    bench_verify()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
