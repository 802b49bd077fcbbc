"""A scoring run of many scores refreshes PostgreSQL's planner statistics of the score tables
when it ends (``annotator.base.planner``): on a server whose autovacuum is off or behind, the
leaderboard's anti-join would otherwise be planned as a nested loop over every pair of scores
(measured: 25 s for 10,000 scores on a never-analysed table, 28 ms once analysed)."""

from __future__ import annotations

import pytest
from django.db import connection

from annotator.actions import grading
from annotator.models import SubmissionScore
from tests.grading.conftest import scored, upload

pytestmark = pytest.mark.django_db


def row_estimate(model) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [model._meta.db_table])
        return cursor.fetchone()[0]


def test_a_large_run_leaves_the_score_table_analysed(
    adjudicated, maintainer, monkeypatch, django_capture_on_commit_callbacks
):
    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's (bin/test's second pass)")
    monkeypatch.setattr(grading, "BULK_ROWS", 6)  # "many" at a size a test can make
    before = row_estimate(SubmissionScore)
    small = upload(adjudicated.packet, maintainer, {f"small-{k}": b'{"actions": []}' for k in range(3)})
    with django_capture_on_commit_callbacks(execute=True):
        scored(adjudicated, small, maintainer)
    assert row_estimate(SubmissionScore) == before != 3  # a small run leaves the statistics be
    many = upload(adjudicated.packet, maintainer, {f"agent-{k}": b'{"actions": []}' for k in range(6)})
    with django_capture_on_commit_callbacks(execute=True):
        scored(adjudicated, many, maintainer)
    assert row_estimate(SubmissionScore) == SubmissionScore.objects.count() == 9
