"""A real Celery worker process picks up work queued by the web app.

The worker runs as a subprocess against the test database and the configured broker:
the SQLite broker file by default, Redis when REDIS_URL is set (the CI's second pass).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from annotator.media.synthetic import write_video
from annotator.models import Job, Video
from tests.factories import client_for


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker(tmp_path, settings):
    broker = (
        os.environ.get("REDIS_URL") and settings.CELERY_BROKER_URL or f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
    )
    settings.CELERY_BROKER_URL = broker
    queue = f"test-{os.getpid()}-{time.monotonic_ns()}"
    from deploy.celery import app

    app.conf.broker_url = broker
    app.conf.task_default_queue = queue
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker,
        "CELERY_QUEUE": queue,
        "FRAMELEDGER_MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "deploy", "worker", "--pool=solo", "-Q", queue, "--loglevel=INFO"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=settings.BASE_DIR,
    )
    yield process, tmp_path / "worker.log"
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()
    app.conf.broker_url = None
    app.conf.task_default_queue = settings.CELERY_TASK_DEFAULT_QUEUE


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_uploaded_video_is_ingested_by_a_real_worker(worker, maintainer, tmp_path):
    process, log = worker
    source = write_video(tmp_path / "clip.mp4", "h264-2997-gop12", 48)
    upload = SimpleUploadedFile("clip.mp4", Path(source).read_bytes(), content_type="video/mp4")
    response = client_for(maintainer).post("/api/videos/", {"title": "clip", "file": upload}, format="multipart")
    assert response.status_code == 202, response.content
    job_id = response.json()["job"]["id"] if isinstance(response.json().get("job"), dict) else response.json()["job_id"]
    deadline = time.monotonic() + 120
    job = Job.objects.get(pk=job_id)
    while job.status not in {Job.Status.DONE, Job.Status.FAILED} and time.monotonic() < deadline:
        assert process.poll() is None, Path(log).read_text()
        time.sleep(0.5)
        job.refresh_from_db()
    assert job.status == Job.Status.DONE, (job.message, Path(log).read_text()[-3000:])
    video = Video.objects.get(pk=job.video_id)
    assert video.status == Video.Status.READY and video.frame_count == 48
    assert "annotator.ingest_video" in Path(log).read_text()
    assert Path(settings.MEDIA_ROOT, video.proxy.name).exists()
