"""An ingest step outside the chunk leases is sent again when its message was lost or its
worker vanished, and ends ``failed`` when that keeps happening
(annotator/actions/ingest_stale.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotator.actions.ingest_stale import do_sweep_stale_ingests
from annotator.base import queue
from annotator.base.media import synthetic
from annotator.entry.tasks import ingest_proxy, ingest_video
from annotator.models import Job, Video
from tests.factories import client_for

TASKS = {queue.INGEST_VIDEO: ingest_video, queue.INGEST_PROXY: ingest_proxy}


@pytest.fixture
def sent(monkeypatch):
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(queue, "send", lambda name, args, **options: calls.append((name, tuple(args))))
    return calls


def _upload(maintainer, tmp_path) -> Job:
    source = synthetic.write_video(tmp_path / "short.mp4", "h264-2997-gop12", 24)
    upload = SimpleUploadedFile("short.mp4", source.read_bytes(), content_type="video/mp4")
    response = client_for(maintainer).post("/api/videos/", {"title": "short", "file": upload}, format="multipart")
    assert response.status_code == 202, response.content
    return Job.objects.get(pk=response.json()["job"]["id"])


@pytest.mark.django_db(transaction=True)
def test_an_ingest_whose_message_was_lost_is_sent_again_and_ends_done(maintainer, settings, sent, tmp_path):
    settings.FRAMELEDGER_INGEST_LEASE_SECONDS = 60
    job = _upload(maintainer, tmp_path)
    assert sent == [(queue.INGEST_VIDEO, (job.video_id, job.pk))]
    del sent[:]  # the broker lost it
    assert do_sweep_stale_ingests(now=timezone.now() + timedelta(seconds=60)) == {"requeued": [], "failed": []}
    later = timezone.now() + timedelta(seconds=121)
    assert do_sweep_stale_ingests(now=later) == {"requeued": [job.pk], "failed": []}
    assert sent == [(queue.INGEST_VIDEO, (job.video_id, job.pk))]
    while sent:  # the worker runs what was sent, and what that sends (the proxy after the remux)
        name, args = sent.pop(0)
        TASKS[name](*args)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE, job.message
    assert Video.objects.get(pk=job.video_id).status == Video.Status.READY


@pytest.mark.django_db(transaction=True)
def test_an_ingest_whose_worker_keeps_vanishing_ends_failed_with_the_reason(maintainer, settings, sent, tmp_path):
    settings.FRAMELEDGER_INGEST_LEASE_SECONDS = 60
    settings.FRAMELEDGER_INGEST_MAX_ATTEMPTS = 2
    job = _upload(maintainer, tmp_path)
    now = timezone.now()
    # A worker took it and was killed: running, its row unchanged since.
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, updated_at=now)
    assert do_sweep_stale_ingests(now=now + timedelta(seconds=119)) == {"requeued": [], "failed": []}
    assert do_sweep_stale_ingests(now=now + timedelta(seconds=121)) == {"requeued": [job.pk], "failed": []}
    assert do_sweep_stale_ingests(now=now + timedelta(seconds=242)) == {"requeued": [], "failed": [job.pk]}
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "it was lost 2 times" in job.message
    assert Video.objects.get(pk=job.video_id).status == Video.Status.FAILED
