"""A moment video's search index built by a real Celery worker process: the video is
uploaded and ingested by the worker, a moment packet is made on it, and the worker
builds the index (the embedded descriptor, from the proxy) that the search API uses."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.models import Job, Video, VideoSearchIndex
from retrieval.grid import iou
from tests.factories import client_for, ensure_builtin_rows, make_packet
from tests.scene_video import write_scene_video


def wait(predicate, process, log, seconds=180):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, Path(log).read_text()[-3000:]
        if predicate():
            return True
        time.sleep(0.5)
    return False


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_worker_builds_the_index_of_a_moment_video(worker, maintainer, annotator_a, annotator_b, adjudicator,
                                                        tmp_path):  # fmt: skip
    process, log = worker
    ensure_builtin_rows()
    source, _ = write_scene_video(tmp_path / "scenes.mp4")
    client = client_for(maintainer)
    upload = SimpleUploadedFile("scenes.mp4", source.read_bytes(), content_type="video/mp4")
    response = client.post("/api/videos/", {"title": "scenes", "file": upload}, format="multipart")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"]["id"])

    def ingested():
        job.refresh_from_db()
        return job.status in {Job.Status.DONE, Job.Status.FAILED}

    assert wait(ingested, process, log) and job.status == Job.Status.DONE, job.message
    assert not VideoSearchIndex.objects.filter(video_id=job.video_id).exists()  # no moment packet yet
    response = client.post("/api/packets/", {
        "title": "scenes", "video": job.video_id, "task_kind": "moment-queries", "annotator_a": annotator_a.username,
        "annotator_b": annotator_b.username, "adjudicator": adjudicator.username,
    }, format="json")  # fmt: skip
    assert response.status_code == 201, response.content
    packet_id = response.json()["id"]

    def built():
        row = VideoSearchIndex.objects.filter(video_id=job.video_id).first()
        return row is not None and row.status not in {"pending", "building"}

    assert wait(built, process, log), Path(log).read_text()[-3000:]
    row = VideoSearchIndex.objects.get(video_id=job.video_id)
    assert row.status == "ready" and row.source == "descriptor" and row.clip_count == 36, row.error
    assert "annotator.build_search_index[" in Path(log).read_text()
    body = client_for(adjudicator).post(f"/api/packets/{packet_id}/search/", {"example": [0, 72], "k": 3},
                                        format="json").json()  # fmt: skip
    best = body["results"][0]
    assert iou((best["start"], best["end"]), (12, 18)) >= 0.5, body


def test_the_build_task_goes_to_the_retrieval_queue_only_when_it_is_set():
    code = "from django.conf import settings; print(settings.CELERY_TASK_ROUTES)"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "deploy.test_settings"}
    env.pop("FRAMELEDGER_RETRIEVAL_QUEUE", None)
    env.pop("FRAMELEDGER_INGEST_QUEUE", None)
    run = [sys.executable, "-c", "import django; django.setup(); " + code]
    unset = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert "build_search_index" not in unset  # the default queue: the demo's one worker serves it
    env["FRAMELEDGER_RETRIEVAL_QUEUE"] = "retrieval"
    env["FRAMELEDGER_INGEST_QUEUE"] = "ingest"
    routed = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert "'annotator.build_search_index': {'queue': 'retrieval'}" in routed
    assert "'annotator.ingest_*': {'queue': 'ingest'}" in routed


@pytest.mark.django_db
def test_the_end_of_ingest_queues_the_index_of_a_video_a_moment_packet_uses(
    tmp_path, maintainer, annotator_a, annotator_b, adjudicator, eager_celery, django_capture_on_commit_callbacks
):
    """Remux first: the video is ready (and put in a moment packet) while its proxy is
    still to be encoded; finishing the proxy queues the index build, from the proxy."""
    from django.core.files import File

    from annotator.actions.ingest import do_ingest_video
    from annotator.entry import tasks

    source, _ = write_scene_video(tmp_path / "scenes.mp4")
    video = Video.objects.create(title="scenes", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as handle:
        video.original.save(source.name, File(handle), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    with django_capture_on_commit_callbacks(execute=False):  # the proxy task is not run yet
        do_ingest_video(video, job, remux_first=True)
    video.refresh_from_db()
    assert video.status == Video.Status.READY and video.remux and not video.proxy
    with django_capture_on_commit_callbacks(execute=False):  # nor the build the packet queues
        make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=video)
    VideoSearchIndex.objects.all().delete()  # so only the end of ingest can make it
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        tasks.ingest_proxy(video.pk, job.pk)
    video.refresh_from_db()
    assert video.proxy, video.error
    row = VideoSearchIndex.objects.get(video=video)
    assert len(callbacks) >= 1 and row.status == "ready" and row.source == "descriptor" and row.clip_count == 36
