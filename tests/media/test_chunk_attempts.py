"""A chunk lost at every attempt ends its ingest ``failed`` with the reason
(annotator/actions/ingest_leases.py, ``FRAMELEDGER_INGEST_MAX_ATTEMPTS``): no ingest stays
``running`` for ever when its workers keep dying."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotator.actions.ingest_leases import do_sweep_ingests, take_lease
from annotator.base import queue
from annotator.models import AuditEntry, Job, Video


@pytest.fixture
def sent(monkeypatch):
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(queue, "send", lambda name, args, **options: calls.append((name, tuple(args))))
    return calls


@pytest.mark.django_db(transaction=True)
def test_a_chunk_lost_at_every_attempt_ends_the_ingest_failed_and_removes_its_workdir(maintainer, settings, sent):
    settings.FRAMELEDGER_INGEST_LEASE_SECONDS = 300
    settings.FRAMELEDGER_INGEST_MAX_ATTEMPTS = 3
    workdir = Path(settings.MEDIA_ROOT) / "tmp" / "ingest-lost"
    (workdir / "chunks").mkdir(parents=True)
    video = Video.objects.create(title="lost", original_name="x.mp4", created_by=maintainer)
    job = Job.objects.create(
        kind="ingest", video=video, created_by=maintainer, status=Job.Status.RUNNING,
        result={"chunked": {"workdir": "tmp/ingest-lost", "sha256": "0" * 64, "chunks": 2, "done": [0],
                            "join_queued": False, "planned_at": time.time(), "leases": {}}},
    )  # fmt: skip
    for attempt in range(1, 3):  # each worker that takes chunk 1 dies with it
        assert take_lease(job, "1", f"host:{attempt}:dead")
        assert do_sweep_ingests(now=time.time() + 301 * attempt) == {job.pk: {"chunks": [1], "join": False}}
    assert [args for _, args in sent] == [(video.pk, job.pk, 1)] * 2
    assert take_lease(job, "1", "host:3:dead")
    report = do_sweep_ingests(now=time.time() + 301 * 3)
    assert report[job.pk]["chunks"] == [] and "proxy chunk 2 was lost 3 times" in report[job.pk]["failed"]
    assert len(sent) == 2  # not sent a third time
    job.refresh_from_db()
    video.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.message == report[job.pk]["failed"]
    assert video.status == Video.Status.FAILED and video.error == job.message
    assert not workdir.exists()
    assert AuditEntry.objects.filter(operation="video.ingest_failed").count() == 1
    assert do_sweep_ingests(now=time.time() + 3600) == {}
