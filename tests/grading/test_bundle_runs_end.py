"""A bundle run always ends: a worker killed mid-run takes every process of the job with
it, the beat sweep ends the run (``error``, with the reason), and the next job on the
machine removes the folder it left; the reference bundle on a packet without features
gives the documented middle-third fallback (issue 22, case 9)."""

from __future__ import annotations

import io
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from annotator.actions.bundles import do_submit_bundle, do_sweep_bundle_runs
from annotator.actions.versions import do_import_provisional_version
from annotator.models import BundleRun, VersionCalibration
from tests.factories import client_for, make_packet, make_ready_video
from tests.grading.sandbox_helpers import bundle, needs_sandbox, range_processes
from tests.grading.test_bundles import synthetic_version, wait_for


@pytest.mark.django_db
def test_the_sweep_ends_running_runs_whose_heartbeat_stopped(
    maintainer, annotator_a, annotator_b, adjudicator, tmp_path
):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, tmp_path)
    stale, live = (do_submit_bundle(version, bundle(), actor=maintainer, label=x, dispatch=False) for x in "ab")
    old = timezone.now() - timedelta(seconds=django_settings.FRAMELEDGER_BUNDLE_LEASE_SECONDS + 5)
    BundleRun.objects.filter(pk=stale.pk).update(status="running", worker="host:1", heartbeat_at=old)
    BundleRun.objects.filter(pk=live.pk).update(status="running", worker="host:2", heartbeat_at=timezone.now())
    assert do_sweep_bundle_runs() == [stale.pk]
    stale.refresh_from_db()
    live.refresh_from_db()
    assert stale.status == "error" and "the worker running it (host:1) stopped" in stale.outcome and stale.finished_at
    assert live.status == "running"
    assert "bundle-sweep" in django_settings.CELERY_BEAT_SCHEDULE
    assert django_settings.CELERY_BEAT_SCHEDULE["bundle-sweep"]["task"] == "annotator.bundle_sweep"


@needs_sandbox
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_run_takes_the_job_with_it_and_the_sweep_ends_the_run(
    worker, settings, maintainer, annotator_a, annotator_b, adjudicator
):
    process, log = worker
    from deploy.celery import app

    settings.FRAMELEDGER_BUNDLE_QUEUE = app.conf.task_default_queue
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    client = client_for(maintainer)
    url = f"/api/versions/{version.pk}/bundles/"
    upload = io.BytesIO(bundle(build="setsid sleep 600 &\nsleep 600\n"))
    upload.name = "sleeper.zip"
    run_id = client.post(url, {"bundle": upload, "label": "sleeper"}, format="multipart").json()["id"]
    deadline = time.monotonic() + 120
    while not range_processes() and time.monotonic() < deadline:
        assert process.poll() is None, Path(log).read_text()[-2000:]
        time.sleep(0.2)
    assert range_processes(), "the stage never started"
    folders = list(Path("/tmp").glob(f"bundle-{run_id}-*"))
    assert folders
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while range_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert range_processes() == [], "a process of the job outlived its worker"  # --die-with-parent, pid namespace
    assert BundleRun.objects.get(pk=run_id).status == "running"
    settings.FRAMELEDGER_BUNDLE_LEASE_SECONDS = 0
    assert do_sweep_bundle_runs() == [run_id]
    ended = client.get(f"/api/bundle-runs/{run_id}/").json()
    assert ended["status"] == "error" and "stopped: no heartbeat since" in ended["outcome"]
    # the next job on the machine removes the folder the killed worker left
    from annotator.base.grading import sandbox_host

    assert str(folders[0]) in sandbox_host.remove_stale_job_folders(Path("/tmp"), "bundle-")
    assert not folders[0].exists()
    left = [p for p in Path("/sys/fs/cgroup/pids").rglob(f"frameledger-{folders[0].name}-*")]
    assert sandbox_host.remove_stale_cgroups(older_than=0) >= len(left)
    assert not any(p.exists() for p in left)  # the killed worker's stage cgroups, empty, removed


@needs_sandbox
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_reference_bundle_without_features_answers_the_middle_third(
    worker, settings, maintainer, annotator_a, annotator_b, adjudicator
):
    process, log = worker
    from deploy.celery import app

    settings.FRAMELEDGER_BUNDLE_QUEUE = app.conf.task_default_queue
    packet = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
        video=make_ready_video("no features", frame_count=2880, fps=(24, 1)),
    )  # fmt: skip
    queries = [
        {"query_id": "q1", "query": "a person opens the door", "intervals": [[10.0, 20.0]]},
        {"query_id": "q2", "query": "the dog runs", "intervals": [[40.0, 80.0]]},
        {"query_id": "q3", "query": "someone waves", "intervals": [[60.0, 62.0]]},
    ]
    version = do_import_provisional_version(packet, queries, actor=maintainer, source="test", source_sha256="6" * 64)
    client = client_for(maintainer)
    created = client.post(f"/api/versions/{version.pk}/bundles/", {"reference": "true"}, format="multipart")
    assert created.status_code == 202, created.json()
    body = wait_for(client, [created.json()["id"]], process, log)[created.json()["id"]]
    assert body["status"] == "done" and body["outcome"] == "ok", body
    assert "middle third" in body["stages"][0]["stderr"] and body["stages"][1]["rows"] == 3
    anchors = {a["name"]: a["reward"] for a in VersionCalibration.objects.get(version=version).anchors}
    assert body["reward"] == anchors["constant_window_prior"] > 0, (body["reward"], anchors)
