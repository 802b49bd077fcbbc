"""A bundle run's outcome is final before any of its rows count, its logs are stored whatever
bytes they hold, and its stages die at their wall clock whatever the worker is doing (issue
34). Each bundle goes through the real path: uploaded over the API, run by a real Celery
worker in bwrap. Run on SQLite and, with ``DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

import base64
import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotator.actions.bundles import do_sweep_bundle_runs
from annotator.models import BundleRun, Submission
from tests.grading.sandbox_helpers import LEGAL_BUILD, ROWS_RUN, bundle, needs_sandbox, range_processes
from tests.grading.test_hostile_bundles import bench, no_leftovers  # noqa: F401

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def wait_until(condition, seconds: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def stage_processes(pid: int) -> list[int]:
    """The live processes below ``pid`` that run as a job's uid: a stage's own, once its
    command runs (not the sandbox's trial run, not bwrap itself)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, frontier = [], {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found += frontier
    return [p for p in found if p in set(range_processes())]


def board_labels(on) -> list[str]:
    rows = on.client.get(f"/api/versions/{on.version.pk}/leaderboard/").json()["rows"]
    return [row.get("label") for row in rows]


def test_logs_with_nul_and_invalid_utf8_are_stored_and_the_run_ends_done(bench):  # noqa: F811
    noisy = "printf 'a\\000b\\377c\\n'\nprintf 'err\\000\\376\\n' >&2\n" + LEGAL_BUILD
    body = bench.wait(bench.submit(bundle(build=noisy), "noisy"), seconds=120)[0]
    assert body["status"] == "done" and body["outcome"] == "ok", body
    build = body["stages"][0]
    assert build["stdout"] == "a\ufffdb\ufffdc\n" and build["stderr"] == "err\ufffd\ufffd\n"
    assert base64.b64decode(build["stdout_base64"]) == b"a\x00b\xffc\n"  # the exact bytes, too
    assert base64.b64decode(build["stderr_base64"]) == b"err\x00\xfe\n"
    assert "stdout_base64" not in body["stages"][1]  # plain text needs no copy
    assert "noisy" in board_labels(bench)
    no_leftovers(body["id"])


def test_rows_the_build_wrote_into_out_never_count(bench):  # noqa: F811
    # The build writes a perfect call-1.jsonl; the call itself writes nothing and exits 0.
    planted = LEGAL_BUILD + 'printf \'{"query_id": "x", "start": 0, "end": 2}\\n\' > /job/out/call-1.jsonl\n'
    body = bench.run(bundle(build=planted, run="exit 0\n"), "planted")
    assert body["status"] == "done" and body["stages"][0]["outcome"] == "ok", body
    assert body["stages"][1]["rows"] == 0 and body["reward"] == 0.0, body
    no_leftovers(body["id"])


def test_a_run_the_sweep_ended_stores_and_scores_nothing_and_never_reaches_the_leaderboard(bench):  # noqa: F811
    slow = "sleep 6\n" + LEGAL_BUILD
    swept = bench.submit(bundle(build=slow, run=ROWS_RUN), "swept")
    wait_until(lambda: stage_processes(bench.process.pid), what="the build's processes")
    # The worker's heartbeat, as if it had lapsed: the sweep ends the run while it builds.
    old = timezone.now() - timedelta(hours=1)
    BundleRun.objects.filter(pk=swept, status=BundleRun.Status.RUNNING).update(heartbeat_at=old)
    assert do_sweep_bundle_runs() == [swept]
    after = bench.run(bundle(), "after")  # the worker takes one task at a time: the first is over
    assert after["status"] == "done", after
    run = BundleRun.objects.get(pk=swept)
    assert run.status == BundleRun.Status.ERROR and "stopped" in run.outcome
    assert run.submission_id is None and not Submission.objects.filter(batch=f"bundle-{swept}").exists()
    labels = board_labels(bench)
    assert "after" in labels and "swept" not in labels, labels
    no_leftovers(swept)


def test_a_stage_dies_at_its_wall_clock_while_the_worker_is_stopped(bench, settings):  # noqa: F811
    settings.FRAMELEDGER_BUNDLE_BUILD_SECONDS = 3
    forever = "while true; do sleep 0.2; done\n"
    run_id = bench.submit(bundle(build=forever), "forever")
    wait_until(lambda: stage_processes(bench.process.pid), what="the build's processes")
    os.kill(bench.process.pid, signal.SIGSTOP)
    try:
        # The worker cannot run a line of Python: only the stage's own watchdog can end it.
        wait_until(lambda: not stage_processes(bench.process.pid), seconds=12, what="the stage's end")
    finally:
        os.kill(bench.process.pid, signal.SIGCONT)
    body = bench.wait(run_id)[0]
    build = body["stages"][0]
    assert build["timed_out"] and build["outcome"] == "timeout" and build["seconds"] < 12, build
    no_leftovers(run_id)
