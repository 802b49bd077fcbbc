"""A real Celery worker process picks up work queued by the web app.

The worker (the ``worker`` fixture in tests/conftest.py) runs as a subprocess against
the test database and the configured broker: a SQLite broker file by default, Redis when
REDIS_URL is set (the CI's second pass).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.media.synthetic import write_video
from annotator.models import Job, Video
from tests.factories import client_for


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
    # Annotate first: the remux was made, then the worker ran the proxy task.
    assert "annotator.ingest_proxy" in Path(log).read_text() and "remux" in job.result
    assert Path(settings.MEDIA_ROOT, video.remux.name).exists()
