"""Chunk leases and the ingest sweep (annotator/actions/ingest_leases.py).

The drill at the end kills a real Celery worker (SIGKILL) in the middle of a chunk: a
second worker with embedded beat (the sweep) finishes the ingest, and the proxy equals
the single pass frame for frame."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.actions.ingest_leases import (
    SWEEP_OWNER,
    do_sweep_ingests,
    do_sweep_job,
    holds_lease,
    renew_lease,
    take_lease,
)
from annotator.base import queue
from annotator.base.media import synthetic
from annotator.base.media.frametable import FrameTable
from annotator.models import AuditEntry, Job, Video
from tests.factories import client_for


@pytest.fixture
def sent(monkeypatch):
    """The tasks sent to the broker (name, args), instead of a broker."""
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(queue, "send", lambda name, args, **options: calls.append((name, tuple(args))))
    return calls


@pytest.fixture
def chunked_job(maintainer, settings):
    settings.FRAMELEDGER_INGEST_LEASE_SECONDS = 300
    video = Video.objects.create(title="leases", original_name="x.mp4", created_by=maintainer)
    now = time.time()
    job = Job.objects.create(
        kind="ingest",
        video=video,
        created_by=maintainer,
        status=Job.Status.RUNNING,
        result={
            "chunked": {
                "workdir": "tmp/ingest-x",
                "sha256": "0" * 64,
                "chunks": 4,
                "done": [0],
                "join_queued": False,
                "planned_at": now - 1000,
                "leases": {},
            }
        },
    )
    return job


def _chunked(job: Job) -> dict:
    job.refresh_from_db()
    return job.result["chunked"]


@pytest.mark.django_db
def test_a_live_lease_is_refused_to_another_owner_and_taken_once_expired(chunked_job, settings):
    assert take_lease(chunked_job, "1", "host:1:aaaa")
    assert take_lease(chunked_job, "1", "host:1:aaaa")  # its own lease: kept
    assert not take_lease(chunked_job, "1", "host:2:bbbb")
    assert holds_lease(chunked_job, "1", "host:1:aaaa") and not holds_lease(chunked_job, "1", "host:2:bbbb")
    before = _chunked(chunked_job)["leases"]["1"]["expires"]
    time.sleep(0.01)
    renew_lease(chunked_job, "1", "host:1:aaaa")
    assert _chunked(chunked_job)["leases"]["1"]["expires"] > before
    renew_lease(chunked_job, "1", "host:2:bbbb")  # not its lease: nothing changes
    assert _chunked(chunked_job)["leases"]["1"]["owner"] == "host:1:aaaa"
    settings.FRAMELEDGER_INGEST_LEASE_SECONDS = 0  # every lease taken from now on is already over
    assert take_lease(chunked_job, "2", "host:1:aaaa")
    assert take_lease(chunked_job, "2", "host:2:bbbb")  # expired: handed on
    Job.objects.filter(pk=chunked_job.pk).update(status=Job.Status.FAILED)
    assert not take_lease(chunked_job, "3", "host:1:aaaa")  # a failed ingest has no leases


@pytest.mark.django_db(transaction=True)
def test_the_sweep_requeues_expired_chunks_only(chunked_job, sent):
    now = time.time()
    chunked = chunked_job.result["chunked"]
    chunked["leases"] = {
        "1": {"owner": "host:1:dead", "expires": now - 1, "taken": now - 400},  # its worker was killed
        "2": {"owner": "host:2:live", "expires": now + 200, "taken": now - 100},  # still renewed
    }  # chunk 3: never started, still waiting in the queue behind a live worker
    Job.objects.filter(pk=chunked_job.pk).update(result=chunked_job.result)
    assert do_sweep_ingests() == {chunked_job.pk: {"chunks": [1], "join": False}}
    assert sent == [(queue.INGEST_CHUNK, (chunked_job.video_id, chunked_job.pk, 1))]
    leases = _chunked(chunked_job)["leases"]
    assert leases["1"]["owner"] == SWEEP_OWNER and leases["2"]["owner"] == "host:2:live"
    assert do_sweep_ingests() == {}  # reserved: the next sweep does not queue it again
    # A task picking the re-queued chunk up takes the reservation.
    assert take_lease(chunked_job, "1", "host:3:new")
    assert _chunked(chunked_job)["requeued"] == 1


@pytest.mark.django_db(transaction=True)
def test_an_idle_ingest_gets_its_never_started_chunks_again(chunked_job, sent):
    # Nothing leased, planned long ago: the chunk messages were lost.
    assert do_sweep_job(chunked_job) == {"chunks": [1, 2, 3], "join": False}
    assert [args[2] for _, args in sent] == [1, 2, 3]
    # Planned a moment ago: the chunks are merely waiting in the queue.
    Job.objects.filter(pk=chunked_job.pk).update(
        result={"chunked": {**chunked_job.result["chunked"], "planned_at": time.time(), "leases": {}}}
    )
    assert do_sweep_job(chunked_job) == {"chunks": [], "join": False}


@pytest.mark.django_db(transaction=True)
def test_a_lost_join_is_queued_again_and_a_running_one_is_not(chunked_job, sent):
    now = time.time()
    chunked = chunked_job.result["chunked"]
    chunked.update(done=[0, 1, 2, 3], join_queued=True, join_queued_at=now - 301)
    Job.objects.filter(pk=chunked_job.pk).update(result=chunked_job.result)
    assert do_sweep_job(chunked_job) == {"chunks": [], "join": True}  # queued, never started
    assert sent == [(queue.INGEST_JOIN, (chunked_job.video_id, chunked_job.pk))]
    assert take_lease(chunked_job, "join", "host:4:join")
    assert do_sweep_job(chunked_job) == {"chunks": [], "join": False}  # it runs, renewing
    assert not take_lease(chunked_job, "join", "host:5:other")  # a duplicate join does nothing
    Job.objects.filter(pk=chunked_job.pk).update(status=Job.Status.DONE)
    assert do_sweep_ingests() == {}


# --- The drill: a real worker killed in the middle of a chunk ---------------------------


def _start_worker(settings, tmp_path, queue_name: str, name: str, *extra: str) -> tuple[subprocess.Popen, Path]:
    from tests.conftest import database_url

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_QUEUE": queue_name,
        "FRAMELEDGER_MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    log_path = tmp_path / f"{name}.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "deploy",
                "worker",
                "--pool=solo",
                "-Q",
                queue_name,
                "-n",
                f"{name}@%h",
                "--loglevel=INFO",
                *extra,
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=settings.BASE_DIR,
        )
    return process, log_path


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def drill_broker(settings, tmp_path):
    """The configured Redis broker when REDIS_URL is set, else a SQLite file (as the
    ``worker`` fixture); this process publishes to it on a queue of the test's own."""
    from deploy.celery import app
    from tests.conftest import fresh_producer_pools, use_test_broker

    _, queue_name = use_test_broker(settings, tmp_path, "drill")
    yield queue_name
    fresh_producer_pools(app)
    app.conf.broker_url = None
    app.conf.task_default_queue = settings.CELERY_TASK_DEFAULT_QUEUE


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_chunk_is_replaced_and_the_sweep_finishes_the_ingest(
    drill_broker, maintainer, monkeypatch, settings, tmp_path
):
    import re

    from annotator.base.media.probe import probe
    from annotator.base.media.proxy import make_proxy

    queue_name = drill_broker
    for key, value in {
        "FRAMELEDGER_INGEST_CHUNK_FRAMES": "48",
        "FRAMELEDGER_INGEST_LEASE_SECONDS": "4",
        "FRAMELEDGER_INGEST_SWEEP_SECONDS": "1",
        "FRAMELEDGER_INGEST_REMUX_FIRST": "0",
    }.items():
        monkeypatch.setenv(key, value)
    settings.FRAMELEDGER_INGEST_CHUNK_FRAMES = 48
    settings.FRAMELEDGER_INGEST_REMUX_FIRST = False
    settings.FRAMELEDGER_INGEST_LEASE_SECONDS = 4
    frames = 384
    source = synthetic.write_video(
        tmp_path / "drill.mp4", "h264-2997-gop12", frames, width=960, height=544, textured=True
    )
    one_pass = make_proxy(source, tmp_path / "one-pass.mp4", probe(source))

    killed, killed_log = _start_worker(settings, tmp_path, queue_name, "killed")
    rescuer = None
    try:
        upload = SimpleUploadedFile("drill.mp4", source.read_bytes(), content_type="video/mp4")
        response = client_for(maintainer).post("/api/videos/", {"title": "drill", "file": upload}, format="multipart")
        assert response.status_code == 202, response.content
        job = Job.objects.get(pk=response.json()["job"]["id"])
        # Wait until the worker is inside a chunk: its lease taken, its progress file
        # written, its output not renamed yet. Then kill it without warning.
        victim = None
        deadline = time.monotonic() + 180
        while victim is None and time.monotonic() < deadline:
            assert killed.poll() is None, killed_log.read_text()[-3000:]
            job.refresh_from_db()
            chunked = (job.result or {}).get("chunked")
            if chunked:
                workdir = Path(settings.MEDIA_ROOT) / chunked["workdir"]
                for key, lease in chunked.get("leases", {}).items():
                    index = int(key) if key.isdigit() else None
                    if (
                        index is not None
                        and index not in chunked["done"]
                        and f":{killed.pid}:" in lease["owner"]
                        and (workdir / "progress" / f"{index:05d}").exists()
                    ):
                        victim = index
            if victim is None:
                time.sleep(0.02)
        assert victim is not None, killed_log.read_text()[-3000:]
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=10)
        assert not (workdir / "chunks" / f"{victim:05d}.nut").exists()  # killed mid-chunk
        job.refresh_from_db()
        assert victim not in job.result["chunked"]["done"] and job.status == Job.Status.RUNNING

        rescuer, rescuer_log = _start_worker(
            settings, tmp_path, queue_name, "rescuer", "-B", "-s", str(tmp_path / "beat-schedule")
        )
        progress = [job.progress]
        deadline = time.monotonic() + 240
        while job.status not in {Job.Status.DONE, Job.Status.FAILED} and time.monotonic() < deadline:
            assert rescuer.poll() is None, rescuer_log.read_text()[-3000:]
            time.sleep(0.25)
            job.refresh_from_db()
            progress.append(job.progress)
        log = rescuer_log.read_text()
        assert job.status == Job.Status.DONE, (job.message, log[-3000:])
    finally:
        _stop(killed)
        if rescuer is not None:
            _stop(rescuer)

    # The sweep queued the killed chunk again (its lease ran out) and the rescuer did it.
    requeued = {int(i) for found in re.findall(r"'chunks': \[([0-9, ]*)\]", log) for i in found.split(",") if i.strip()}
    assert victim in requeued, log[-3000:]
    assert "annotator.ingest_join[" in log
    # Progress ends right, and never went back.
    assert job.progress == 1.0 and progress == sorted(progress)
    assert job.result["chunks"] == 8 and job.result["frame_count"] == frames
    video = Video.objects.get(pk=job.video_id)
    # Joined once: one set of derived files, one ingest audit entry, no working directory left.
    root = Path(settings.MEDIA_ROOT)
    assert [len(list((root / "videos" / d).iterdir())) for d in ("proxy", "frames", "thumbs")] == [1, 1, 1]
    assert not list((root / "tmp").iterdir())
    assert AuditEntry.objects.filter(operation="video.ingest", object_id=str(video.pk)).count() == 1
    # The proxy equals the single pass: frame table and the barcode of every frame.
    table = FrameTable.load(video.frame_table.path)
    assert (table.pts, table.keyframes, table.end, table.time_base) == (
        one_pass.pts,
        one_pass.keyframes,
        one_pass.end,
        one_pass.time_base,
    )
    assert [i for _, i in synthetic.iter_decoded_indices(video.proxy.path)] == list(range(frames))


@pytest.mark.django_db
def test_a_join_whose_lease_was_handed_on_stops_and_the_new_owner_finishes(
    synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks, monkeypatch, settings
):
    from django.core.files import File

    from annotator.actions import ingest_chunks
    from annotator.actions.ingest import do_ingest_video

    held = []  # the join is held back; the chunks run (eagerly)
    real_send = queue.send
    monkeypatch.setattr(
        queue,
        "send",
        lambda name, args, **options: held.append(args) if name == queue.INGEST_JOIN else real_send(name, args),
    )
    settings.FRAMELEDGER_INGEST_REMUX_FIRST = False
    source = synthetic_source("h264-2997-gop12")
    video = Video.objects.create(title="join", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    with django_capture_on_commit_callbacks(execute=True):
        do_ingest_video(video, job, chunk_frames=48)
    assert len(held) == 1
    job.refresh_from_db()
    workdir = Path(settings.MEDIA_ROOT) / job.result["chunked"]["workdir"]

    # While this join copies the chunks, it stalls a whole lease period: the sweep hands
    # its lease to another run, which holds it now.
    real_join = ingest_chunks.join_chunks

    def stalled_join(*args, **kwargs):
        table = real_join(*args, **kwargs)
        row = Job.objects.get(pk=job.pk)
        row.result["chunked"]["leases"]["join"] = {"owner": "other:1:live", "expires": time.time() + 300}
        Job.objects.filter(pk=job.pk).update(result=row.result)
        return table

    monkeypatch.setattr(ingest_chunks, "join_chunks", stalled_join)
    ingest_chunks.do_join_chunks(video, Job.objects.get(pk=job.pk))
    video.refresh_from_db()
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and not video.proxy  # it placed nothing
    assert (workdir / "chunks").is_dir() and not list(workdir.glob("join-*"))  # its own directory only
    # It deleted each chunk once copied, while it held the lease (disk: never chunks and
    # joined proxy both whole).
    assert not list((workdir / "chunks").glob("*.nut"))
    assert not (Path(settings.MEDIA_ROOT) / "videos" / "proxy").exists()
    # A second join while the other holds the lease does nothing either.
    monkeypatch.setattr(ingest_chunks, "join_chunks", real_join)
    ingest_chunks.do_join_chunks(video, Job.objects.get(pk=job.pk))
    assert Job.objects.get(pk=job.pk).status == Job.Status.RUNNING
    # The other run dies too; its lease runs out and the sweep's join finishes the ingest.
    row = Job.objects.get(pk=job.pk)
    row.result["chunked"]["leases"]["join"]["expires"] = time.time() - 1
    Job.objects.filter(pk=job.pk).update(result=row.result)
    with django_capture_on_commit_callbacks(execute=True):
        assert do_sweep_job(job)["join"] is True
    assert len(held) == 2
    # The new join finds the chunks consumed: they are encoded again (eagerly here), and the
    # last of them queues the join once more.
    with django_capture_on_commit_callbacks(execute=True):
        ingest_chunks.do_join_chunks(video, Job.objects.get(pk=job.pk))
    assert len(held) == 3 and Job.objects.get(pk=job.pk).result["chunked"]["requeued"] >= 5
    ingest_chunks.do_join_chunks(video, Job.objects.get(pk=job.pk))
    video.refresh_from_db()
    assert Job.objects.get(pk=job.pk).status == Job.Status.DONE and video.proxy
    assert [i for _, i in synthetic.iter_decoded_indices(video.proxy.path)] == list(range(240))
    assert not workdir.exists()
