"""A scoring run goes through the real queue: a Celery worker process scores the batch
(a group of tasks) and the run's progress and results land in the database."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from annotator.models import Job, SubmissionScore
from tests.factories import client_for
from tests.grading.conftest import tennis_golden, tennis_submissions, zip_of
from tests.grading.test_published_batches import PUBLISHED_TENNIS


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_batch_is_scored_by_a_real_worker(worker, tennis_version, maintainer):
    process, log = worker
    client = client_for(maintainer)
    packet_id = tennis_version.packet_id
    files = tennis_submissions()
    response = client.post(f"/api/packets/{packet_id}/submissions/", {"archive": zip_of(files)}, format="multipart")
    assert response.status_code == 201
    assert client.post(f"/api/versions/{tennis_version.pk}/ready/").status_code == 201
    response = client.post(f"/api/packets/{packet_id}/scoring-runs/", {"tier": "provisional"}, format="json")
    assert response.status_code == 202
    run_url = f"/api/scoring-runs/{response.json()['id']}/"
    deadline = time.monotonic() + 120
    body = client.get(run_url).json()
    while body["job"]["status"] not in {Job.Status.DONE, Job.Status.FAILED} and time.monotonic() < deadline:
        assert process.poll() is None, Path(log).read_text()
        time.sleep(0.5)
        body = client.get(run_url).json()
    assert body["job"]["status"] == "done", (body, Path(log).read_text()[-3000:])
    assert body["job"]["progress"] == 1.0 and body["counts"] == {"pending": 0, "scored": 6, "error": 0}
    assert body["job"]["message"] == "6 of 6 scored"
    assert "annotator.score_batch" in Path(log).read_text()
    board = client.get(f"/api/versions/{tennis_version.pk}/leaderboard/").json()
    assert {row["label"]: row["reward"] for row in board["rows"]} == PUBLISHED_TENNIS
    for path in files.values():
        score = SubmissionScore.objects.get(submission__original_name=path.name, submission__sha256=_sha(path))
        assert bytes(score.reward_json) == tennis_golden(path).read_bytes()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
