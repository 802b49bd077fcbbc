"""A scoring task whose database connection is cut waits the error out and finishes
(annotator/entry/task_retry.py): PostgreSQL terminates the task's own backend, as a
restart of the server does, and the batch is scored on the next try."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from annotator.actions.grading import do_start_scoring_run
from annotator.entry.task_retry import with_database_retries
from annotator.entry.tasks import score_batch
from annotator.models import Job, ScoringBatch, SubmissionScore
from tests.conftest import database_url
from tests.grading.conftest import upload

pytestmark = pytest.mark.skipif(not database_url().startswith("postgres"), reason="cuts a PostgreSQL backend")


def _terminate_this_backend() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(_dsn(), autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]


def _dsn() -> str:
    params = connection.settings_dict
    return psycopg.conninfo.make_conninfo(
        dbname=params["NAME"], user=params["USER"], password=params["PASSWORD"] or None,
        host=params["HOST"] or None, port=params["PORT"] or None,
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_scoring_task_whose_connection_was_cut_scores_its_batch_on_the_next_try(
    tennis_version, maintainer, monkeypatch
):
    monkeypatch.setattr("annotator.actions.grading.enqueue_group_on_commit", lambda name, arg_lists: None)
    submissions = upload(tennis_version.packet, maintainer, {f"s{i}": b'{"events": []}' for i in range(3)})
    run = do_start_scoring_run(tennis_version, submissions, actor=maintainer, chunk_size=3)
    batch = ScoringBatch.objects.get(run=run)
    _terminate_this_backend()
    assert score_batch(run.pk, batch.result_ids, batch.pk) == 3
    run.job.refresh_from_db()
    assert run.job.status == Job.Status.DONE
    assert run.results.filter(status=SubmissionScore.Status.SCORED).count() == 3


@pytest.mark.django_db(transaction=True)
def test_a_database_error_that_outlasts_the_tries_is_raised():
    tries = []

    def cut() -> None:
        tries.append(1)
        _terminate_this_backend()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    from django.db import OperationalError

    with pytest.raises(OperationalError):
        with_database_retries(cut, what="test", delays=(0.1, 0.1))
    connection.close()  # the broken connection, as the worker's end of task does
    assert len(tries) == 3
