"""Chunked ingest through a real Celery worker process and the configured broker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.media import synthetic
from annotator.base.media.frametable import FrameTable
from annotator.models import Job, Video
from tests.factories import client_for


@pytest.fixture
def small_chunks(monkeypatch, settings):
    """Chunks of 48 frames, in this process and in the worker started after this fixture."""
    monkeypatch.setenv("FRAMELEDGER_INGEST_CHUNK_FRAMES", "48")
    settings.FRAMELEDGER_INGEST_CHUNK_FRAMES = 48


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_encodes_the_chunks_and_joins_them(small_chunks, worker, maintainer, tmp_path):
    process, log = worker
    source = synthetic.write_video(tmp_path / "clip.mp4", "h264-vfr-bframes", 240)
    upload = SimpleUploadedFile("clip.mp4", source.read_bytes(), content_type="video/mp4")
    response = client_for(maintainer).post("/api/videos/", {"title": "clip", "file": upload}, format="multipart")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"]["id"])
    deadline = time.monotonic() + 180
    while job.status not in {Job.Status.DONE, Job.Status.FAILED} and time.monotonic() < deadline:
        assert process.poll() is None, Path(log).read_text()
        time.sleep(0.5)
        job.refresh_from_db()
    text = Path(log).read_text()
    assert job.status == Job.Status.DONE, (job.message, text[-3000:])
    assert job.result["chunks"] == 5
    assert text.count("annotator.ingest_chunk[") >= 5 and "annotator.ingest_join[" in text
    video = Video.objects.get(pk=job.video_id)
    table = FrameTable.load(video.frame_table.path)
    assert table.frame_count == 240 and table.keyframes == tuple(range(0, 240, 12))
    assert [i for _, i in synthetic.iter_decoded_indices(video.proxy.path)] == list(range(240))
