"""Chunked proxy encoding: chunks encoded separately and joined equal the single pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings

from annotator.base.media import synthetic
from annotator.base.media.chunks import chunk_path, encode_chunk, join_chunks, plan_chunks, prepare_chunks
from annotator.base.media.errors import MediaError
from annotator.base.media.frametable import FrameTable
from annotator.base.media.probe import probe
from annotator.base.media.proxy import PROXY_GOP, make_proxy
from annotator.models import Job, Video
from tests.media.conftest import OPEN_GOP_CUT

JOINED = ("h264-24-gop250", "h264-vfr-bframes", "vp9-webm", "h264-offset-1.5s", "h264-rotated-90", OPEN_GOP_CUT)


def barcodes(path) -> list[int | None]:
    return [index for _, index in synthetic.iter_decoded_indices(path)]


def test_chunks_start_on_proxy_keyframes_and_cover_every_frame():
    assert plan_chunks(100, 30, 12) == [(0, 24), (24, 48), (48, 72), (72, 96), (96, 100)]
    assert plan_chunks(10, 5, 12) == [(0, 10)]
    assert plan_chunks(36, 36, 12) == [(0, 36)]


@pytest.mark.parametrize("name", JOINED)
def test_the_joined_proxy_equals_the_single_pass(synthetic_source, tmp_path, name):
    source = synthetic_source(name)
    probed = probe(source)
    single = make_proxy(source, tmp_path / "single.mp4", probed)
    state = prepare_chunks(source, tmp_path, probed, 24, gop=PROXY_GOP)
    assert state is not None and len(state.chunks) >= 3
    for index in reversed(range(len(state.chunks))):  # any order: workers finish when they finish
        encode_chunk(tmp_path, index)
    joined = join_chunks(tmp_path, tmp_path / "joined.mp4")
    assert joined == single  # time base, every pts, keyframes every 12, end, rate
    assert barcodes(tmp_path / "joined.mp4") == barcodes(tmp_path / "single.mp4")


def test_decode_order_sources_are_encoded_in_one_pass(synthetic_source, tmp_path):
    probed = probe(synthetic_source("h264-avi-bframes"))
    assert prepare_chunks(synthetic_source("h264-avi-bframes"), tmp_path, probed, 24) is None


def test_a_redelivered_chunk_is_idempotent_and_a_killed_workers_part_file_is_redone(synthetic_source, tmp_path):
    source = synthetic_source("h264-2997-gop12")
    probed = probe(source)
    prepare_chunks(source, tmp_path, probed, 48, gop=PROXY_GOP)
    first = encode_chunk(tmp_path, 0)
    stamp = first.stat().st_mtime_ns
    assert encode_chunk(tmp_path, 0) == first and first.stat().st_mtime_ns == stamp  # done: not redone
    # A worker killed mid-chunk leaves only its own .part file: the redelivered task encodes
    # afresh under a name of its own (a run still alive is never written over) and renames.
    part = chunk_path(tmp_path, 1).with_suffix(".4242-0badc0de.part")
    part.write_bytes(b"half a chunk")
    assert encode_chunk(tmp_path, 1) == chunk_path(tmp_path, 1)
    assert part.read_bytes() == b"half a chunk"  # left for the working directory's removal
    assert sorted(p.name for p in part.parent.iterdir()) == sorted(["00000.nut", "00001.nut", part.name])
    for index in range(2, 5):
        encode_chunk(tmp_path, index)
    joined = join_chunks(tmp_path, tmp_path / "joined.mp4")
    assert barcodes(tmp_path / "joined.mp4") == list(range(240))
    assert joined.keyframes == tuple(range(0, 240, PROXY_GOP))


def test_a_missing_chunk_fails_the_join(synthetic_source, tmp_path):
    source = synthetic_source("h264-2997-gop12")
    prepare_chunks(source, tmp_path, probe(source), 48, gop=PROXY_GOP)
    for index in (0, 1, 3, 4):
        encode_chunk(tmp_path, index)
    with pytest.raises((MediaError, OSError)):
        join_chunks(tmp_path, tmp_path / "joined.mp4")


@pytest.mark.django_db
def test_chunked_ingest_runs_on_celery_tasks_and_equals_the_single_pass(ingest):
    chunked = ingest("h264-vfr-bframes", title="chunked")
    single = ingest("h264-vfr-bframes", title="single", chunk_frames=0)
    job = chunked.jobs.get()
    assert (job.status, job.progress, job.message) == (Job.Status.DONE, 1.0, "Ready.")
    assert job.result["chunks"] == 5 and single.jobs.get().result["chunks"] == 1
    assert FrameTable.load(chunked.frame_table.path) == FrameTable.load(single.frame_table.path)
    assert barcodes(chunked.proxy.path) == list(range(240))
    tmp = Path(settings.MEDIA_ROOT) / "tmp"
    assert not tmp.exists() or not any(tmp.iterdir())


@pytest.mark.django_db
def test_a_failing_chunk_fails_the_video_cleanly(
    synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks
):
    from django.core.files import File

    from annotator.actions.ingest import do_ingest_video

    source = synthetic_source("h264-2997-gop12")
    video = Video.objects.create(title="vanishing", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    with django_capture_on_commit_callbacks() as queued:
        do_ingest_video(video, job, chunk_frames=48, remux_first=False)
    assert len(queued) == 1  # the chunk tasks, queued after commit
    os.unlink(video.original.path)  # the source disappears before any chunk runs
    queued[0]()
    video.refresh_from_db()
    job.refresh_from_db()
    assert video.status == Video.Status.FAILED and job.status == Job.Status.FAILED
    assert video.error == job.message and video.error
    assert "chunk from frame 0" in video.error and "No such file" in video.error
    tmp = Path(settings.MEDIA_ROOT) / "tmp"
    assert not tmp.exists() or not any(tmp.iterdir())


def _queues_with(env_value: str | None) -> dict:
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "FRAMELEDGER_INGEST_QUEUE"}
    env["DJANGO_SETTINGS_MODULE"] = "deploy.test_settings"
    env["CELERY_QUEUE"] = "everything"
    if env_value is not None:
        env["FRAMELEDGER_INGEST_QUEUE"] = env_value
    code = (
        "import django, json; django.setup(); from deploy.celery import app; import annotator.entry.tasks; "
        "names = ['annotator.ingest_video', 'annotator.ingest_proxy', 'annotator.ingest_chunk', "
        "'annotator.ingest_join', 'annotator.ingest_sweep', 'annotator.ingest_full', "
        "'annotator.score_batch']; "
        "print(json.dumps({n: app.amqp.router.route({}, n, (), {})['queue'].name for n in names}))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_ingest_tasks_can_be_given_their_own_queue():
    assert set(_queues_with(None).values()) == {"everything"}
    routed = _queues_with("ingest")
    assert routed == {
        "annotator.ingest_video": "ingest",
        "annotator.ingest_proxy": "ingest",
        "annotator.ingest_chunk": "ingest",
        "annotator.ingest_join": "ingest",
        "annotator.ingest_sweep": "ingest",
        "annotator.ingest_full": "ingest",
        "annotator.score_batch": "everything",
    }


@pytest.mark.django_db
def test_a_redelivered_ingest_task_does_not_plan_the_chunks_again(
    synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks
):
    from django.core.files import File

    from annotator.actions.ingest import do_ingest_video
    from annotator.entry.tasks import ingest_video

    source = synthetic_source("h264-2997-gop12")
    video = Video.objects.create(title="twice", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    with django_capture_on_commit_callbacks() as queued:
        do_ingest_video(video, job, chunk_frames=48, remux_first=False)
    job.refresh_from_db()
    plan = dict(job.result)
    with django_capture_on_commit_callbacks() as again:
        ingest_video(video.pk, job.pk)  # the broker delivers the ingest message a second time
    job.refresh_from_db()
    assert job.result == plan and again == []
    assert len(list((Path(settings.MEDIA_ROOT) / "tmp").iterdir())) == 1
    with django_capture_on_commit_callbacks(execute=True):
        queued[0]()  # the chunk tasks queued the first time finish the ingest
    video.refresh_from_db()
    assert video.status == Video.Status.READY
