"""Scoring batch leases and the scoring sweep (annotator/actions/scoring_leases.py,
scoring_sweep.py): a batch whose worker vanished, or whose message the broker lost, is
sent again; a batch lost too often ends its run ``failed`` with the reason.

The drill at the end empties a real broker's queue under a dispatched run and starts a real
worker with embedded beat: the sweep finds the lost batches and the run ends ``done``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import kombu
import pytest
from django.utils import timezone

from annotator.actions.grading import do_score_batch, do_start_scoring_run, update_progress
from annotator.actions.scoring_leases import SWEEP_OWNER, renew_batch_lease, take_batch_lease
from annotator.actions.scoring_sweep import do_sweep_scoring_runs
from annotator.base import queue
from annotator.models import Job, ScoringBatch, SubmissionScore
from tests.grading.conftest import upload
from tests.integrity.tampering import verify

SOLUTION = b'{"events": []}'


@pytest.fixture
def sent(monkeypatch):
    """The tasks sent to the broker (name, args), instead of a broker."""
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(queue, "send", lambda name, args, **options: calls.append((name, tuple(args))))
    monkeypatch.setattr(
        "annotator.actions.grading.enqueue_group_on_commit",
        lambda name, arg_lists: calls.extend((name, tuple(a)) for a in arg_lists),
    )
    return calls


@pytest.fixture
def leases(settings):
    settings.FRAMELEDGER_SCORING_LEASE_SECONDS = 30
    settings.FRAMELEDGER_SCORING_MAX_ATTEMPTS = 3


def _start(version, maintainer, n: int, chunk_size: int):
    submissions = upload(version.packet, maintainer, {f"s{i}": SOLUTION for i in range(n)})
    return do_start_scoring_run(version, submissions, actor=maintainer, chunk_size=chunk_size)


def _later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


def _run_sent(sent: list, start: int = 0) -> None:
    """Run the score_batch tasks sent from position ``start`` on, as a worker would."""
    for name, args in sent[start:]:
        assert name == queue.SCORE_BATCH
        do_score_batch(args[0], args[1], batch_id=args[2])


@pytest.mark.django_db(transaction=True)
def test_a_batch_whose_worker_vanished_is_sent_again_and_the_run_ends_done(tennis_version, maintainer, sent, leases):
    run = _start(tennis_version, maintainer, 6, chunk_size=3)
    first, second = ScoringBatch.objects.filter(run=run).order_by("index")
    assert [args for _, args in sent] == [(run.pk, first.result_ids, first.pk), (run.pk, second.result_ids, second.pk)]
    # The first batch's worker took its lease and was killed before it scored anything.
    assert take_batch_lease(first.pk, "host:1:dead")
    assert not take_batch_lease(first.pk, "host:2:late")  # a live lease is not handed on
    # The second batch is scored by a live worker.
    do_score_batch(run.pk, second.result_ids, batch_id=second.pk)
    first.refresh_from_db()
    expires = first.lease_expires
    assert do_sweep_scoring_runs(now=expires - timedelta(seconds=1)) == {"requeued": [], "failed": []}  # live yet
    report = do_sweep_scoring_runs(now=expires + timedelta(seconds=1))
    assert report == {"requeued": [first.pk], "failed": []}
    first.refresh_from_db()
    assert first.attempts == 2 and first.lease_owner == SWEEP_OWNER and first.lease_expires is None
    assert sent[-1] == (queue.SCORE_BATCH, (run.pk, first.result_ids, first.pk))
    # Just sent: not again at the same sweep time.
    assert do_sweep_scoring_runs(now=expires + timedelta(seconds=1)) == {"requeued": [], "failed": []}
    _run_sent(sent, len(sent) - 1)
    run.job.refresh_from_db()
    assert run.job.status == Job.Status.DONE and run.job.message == "6 of 6 scored"
    assert not renew_batch_lease(first.pk, "host:1:dead")  # the dead worker's lease is gone
    assert set(run.results.values_list("status", flat=True)) == {SubmissionScore.Status.SCORED}
    assert do_sweep_scoring_runs(now=_later(3600)) == {"requeued": [], "failed": []}


@pytest.mark.django_db(transaction=True)
def test_batches_lost_from_the_broker_are_sent_again_once_no_worker_shows_life(
    tennis_version, maintainer, sent, leases
):
    run = _start(tennis_version, maintainer, 6, chunk_size=2)
    batches = list(ScoringBatch.objects.filter(run=run).order_by("index"))
    # A worker scores the first batch; the broker loses the other two messages.
    do_score_batch(run.pk, batches[0].result_ids, batch_id=batches[0].pk)
    del sent[:]
    done_at = ScoringBatch.objects.get(pk=batches[0].pk).done_at
    # Merely waiting in the queue: a worker showed life less than a lease period ago.
    assert do_sweep_scoring_runs(now=done_at + timedelta(seconds=20)) == {"requeued": [], "failed": []}
    report = do_sweep_scoring_runs(now=done_at + timedelta(seconds=31))
    assert report == {"requeued": [batches[1].pk, batches[2].pk], "failed": []}
    _run_sent(sent)
    run.job.refresh_from_db()
    assert run.job.status == Job.Status.DONE and run.job.progress == 1.0
    assert run.results.filter(status=SubmissionScore.Status.SCORED).count() == 6


@pytest.mark.django_db(transaction=True)
def test_a_batch_lost_at_every_attempt_ends_its_run_failed_with_the_reason(tennis_version, maintainer, sent, leases):
    run = _start(tennis_version, maintainer, 4, chunk_size=2)
    first, second = ScoringBatch.objects.filter(run=run).order_by("index")
    do_score_batch(run.pk, second.result_ids, batch_id=second.pk)
    for attempt in range(1, 4):  # each send of the first batch dies with its worker
        assert take_batch_lease(first.pk, f"host:{attempt}:dead")
        now = ScoringBatch.objects.get(pk=first.pk).lease_expires + timedelta(seconds=1)
        report = do_sweep_scoring_runs(now=now)
        if attempt < 3:
            assert report == {"requeued": [first.pk], "failed": []}
    assert report == {"requeued": [], "failed": [run.pk]}
    run.refresh_from_db()
    run.job.refresh_from_db()
    assert run.job.status == Job.Status.FAILED and run.finished_at is not None
    assert run.job.message.startswith("scoring failed: batch 1 was lost 3 times")
    assert "host:3:dead" in run.job.message
    assert run.job.result["reason"] == run.job.message
    errors = run.results.filter(status=SubmissionScore.Status.ERROR)
    assert sorted(errors.values_list("pk", flat=True)) == sorted(first.result_ids)
    assert {e.error for e in errors} == {run.job.message}
    # A late task for the failed batch does nothing, a task still running when the run
    # failed ends with the progress update it always makes, and the run stays failed.
    assert do_score_batch(run.pk, first.result_ids, batch_id=first.pk) == 0
    update_progress(run)
    run.job.refresh_from_db()
    assert run.job.status == Job.Status.FAILED
    assert do_sweep_scoring_runs(now=now + timedelta(hours=1)) == {"requeued": [], "failed": []}
    code, printed = verify()
    assert code == 0, printed


# --- The drill: the broker's queue emptied under a run, a real worker with beat -----------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_run_whose_messages_the_broker_lost_is_finished_by_the_sweep(tennis_version, maintainer, settings, tmp_path):
    from deploy.celery import app
    from tests.conftest import database_url, fresh_producer_pools, use_test_broker

    broker, queue_name = use_test_broker(settings, tmp_path, "scoring-sweep")
    try:
        run = _start(tennis_version, maintainer, 6, chunk_size=2)
        assert ScoringBatch.objects.filter(run=run).count() == 3
        with kombu.Connection(broker) as conn:  # the broker restarted without its data
            assert conn.default_channel.queue_purge(queue_name) == 3
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker,
            "CELERY_QUEUE": queue_name,
            "FRAMELEDGER_SCORING_LEASE_SECONDS": "2",
            "FRAMELEDGER_SCORING_SWEEP_SECONDS": "1",
            "CELERY_BEAT_SCHEDULE_FILENAME": str(tmp_path / "beat-schedule"),
        }
        log = tmp_path / "worker.log"
        with open(log, "w") as out:
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "deploy", "worker", "-B", "--pool=solo", "-Q", queue_name],
                env=env, stdout=out, stderr=subprocess.STDOUT, cwd=settings.BASE_DIR,
            )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            run.job.refresh_from_db()
            while run.job.status != Job.Status.DONE and time.monotonic() < deadline:
                assert worker.poll() is None, log.read_text()[-3000:]
                time.sleep(0.3)
                run.job.refresh_from_db()
            assert run.job.status == Job.Status.DONE, log.read_text()[-3000:]
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
    finally:
        fresh_producer_pools(app)
        app.conf.broker_url = None
        app.conf.task_default_queue = settings.CELERY_TASK_DEFAULT_QUEUE
    assert run.results.filter(status=SubmissionScore.Status.SCORED).count() == 6
    assert set(ScoringBatch.objects.filter(run=run).values_list("attempts", flat=True)) == {2}
    assert "sent again" in Path(log).read_text()
