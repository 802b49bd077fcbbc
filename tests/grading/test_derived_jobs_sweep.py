"""An agreement or calibration job left queued or running (its worker killed, its message
lost with the broker's data) is sent again by the sweep and ends ``done``; one lost at every
attempt ends ``failed`` with the reason (annotator/actions/derived_sweep.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.actions.derived import do_calibration_job
from annotator.actions.derived_sweep import do_sweep_derived_jobs
from annotator.base import queue
from annotator.models import Job


@pytest.fixture
def sent(monkeypatch):
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(queue, "send", lambda name, args, **options: calls.append((name, tuple(args))))
    return calls


def _lost_calibration_job(version) -> Job:
    return Job.objects.create(kind="calibration", packet_id=version.packet_id, version=version, message="queued")


@pytest.mark.django_db(transaction=True)
def test_a_calibration_job_whose_message_was_lost_is_sent_again_and_ends_done(tennis_version, settings, sent):
    settings.FRAMELEDGER_DERIVED_STALE_SECONDS = 120
    job = _lost_calibration_job(tennis_version)
    assert do_sweep_derived_jobs() == {"requeued": [], "failed": []}  # queued a moment ago
    later = timezone.now() + timedelta(seconds=121)
    assert do_sweep_derived_jobs(now=later) == {"requeued": [job.pk], "failed": []}
    assert sent == [(queue.VERSION_CALIBRATION, (job.pk,))]
    assert do_sweep_derived_jobs(now=later) == {"requeued": [], "failed": []}  # just sent
    do_calibration_job(sent[0][1][0])
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.result["sends"] == 1
    assert do_sweep_derived_jobs(now=later + timedelta(hours=1)) == {"requeued": [], "failed": []}


@pytest.mark.django_db(transaction=True)
def test_a_derived_job_lost_at_every_attempt_ends_failed_with_the_reason(tennis_version, settings, sent):
    settings.FRAMELEDGER_DERIVED_STALE_SECONDS = 120
    settings.FRAMELEDGER_DERIVED_MAX_ATTEMPTS = 3
    job = _lost_calibration_job(tennis_version)
    now = timezone.now()
    reports = []
    for _ in range(3):
        now += timedelta(seconds=121)
        reports.append(do_sweep_derived_jobs(now=now))
    assert reports[:2] == [{"requeued": [job.pk], "failed": []}] * 2
    assert reports[2] == {"requeued": [], "failed": [job.pk]}
    assert len(sent) == 2
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert (
        job.message
        == "the calibration job was lost 3 times (its worker was killed or its message was lost) and was not computed"
    )
