"""Acceptance: the published calibration submissions, uploaded as one batch each,
give the published rewards on the leaderboard and the published output bytes."""

from __future__ import annotations

import json

import pytest

from annotator.models import GroundTruthVersion, Job, ScoringRun, SubmissionScore
from tests.factories import client_for
from tests.grading.conftest import (
    EGOCENTRIC,
    egocentric_submissions,
    score_in_process,
    scored,
    tennis_golden,
    tennis_submissions,
    upload,
    zip_of,
)

PUBLISHED_TENNIS = {
    "rollouts/codex-gpt-5.6-sol-high-v10-full-media": 0.3305,
    "ablations/codex-gpt-5.6-sol-high-v13-scoreboard-only": 0.1175,
    "ablations/codex-gpt-5.6-sol-high-v1-frame-dump-observed-zero-call": 0.0222,
    "baselines/anchors/empty": 0.0,
    "baselines/score-result-prior-v4-exact": 0.1833,
    "baselines/anchors/oracle": 1.0,
}
PUBLISHED_EGOCENTRIC = {"claude-opus-4.8": 0.033613, "claude-opus-4.8.partial": 0.0, "codex-gpt-5.6-sol": 0.0}


def tennis_label(name: str) -> str:
    name = name.removeprefix("calibration/")
    return next(
        label for label in PUBLISHED_TENNIS if name in {f"{label}.submitted-solution.json", f"{label}/solution.json"}
    )


def upload_and_score(client, packet_id: int, files: dict, **run_body) -> ScoringRun:
    response = client.post(f"/api/packets/{packet_id}/submissions/", {"archive": zip_of(files)}, format="multipart")
    assert response.status_code == 201, response.content
    assert len(response.json()["submissions"]) == len(files)
    version = GroundTruthVersion.objects.filter(packet_id=packet_id, tier=run_body["tier"]).order_by("-number").first()
    assert client.post(f"/api/versions/{version.pk}/ready/").status_code == 201  # runs need a ready version
    response = client.post(f"/api/packets/{packet_id}/scoring-runs/", run_body, format="json")
    assert response.status_code == 202, response.content
    run = ScoringRun.objects.get(pk=response.json()["id"])
    assert run.job.status == Job.Status.QUEUED
    score_in_process(run)
    run.job.refresh_from_db()
    assert (run.job.status, run.job.progress) == (Job.Status.DONE, 1.0)
    return run


@pytest.mark.django_db
def test_the_tennis_batch_gives_the_published_rewards_and_bytes(tennis_version, maintainer):
    client = client_for(maintainer)
    files = tennis_submissions()
    run = upload_and_score(client, tennis_version.packet_id, files, tier="provisional")
    assert run.version_id == tennis_version.pk and run.scorer_id == "hierarchical-bottleneck-v1"

    board = client.get(f"/api/versions/{tennis_version.pk}/leaderboard/").json()
    rewards = {row["label"]: row["reward"] for row in board["rows"]}
    assert rewards == PUBLISHED_TENNIS
    assert [row["reward"] for row in board["rows"]] == sorted(PUBLISHED_TENNIS.values(), reverse=True)

    for name, path in files.items():
        score = SubmissionScore.objects.get(run=run, submission__label=tennis_label(name))
        stored = client.get(f"/api/scores/{score.pk}/files/reward.json")
        assert stored.status_code == 200
        assert stored.content == tennis_golden(path).read_bytes(), name


@pytest.mark.django_db
def test_the_egocentric_rollouts_give_the_published_reward_files(gtea_version, maintainer):
    client = client_for(maintainer)
    files = egocentric_submissions()
    assert len(files) == 3
    run = upload_and_score(client, gtea_version.packet_id, files, tier="provisional")
    assert run.params == {"frame_count": 25692, "tolerance": 12}
    board = client.get(f"/api/versions/{gtea_version.pk}/leaderboard/").json()
    rewards = {row["label"]: row["reward"] for row in board["rows"]}
    assert rewards == PUBLISHED_EGOCENTRIC  # labels: the file names (one folder, so no path)
    for path in files.values():
        golden = path.with_name(path.name.replace(".solution.json", ".reward.json")).read_bytes()
        label = path.name.removesuffix(".solution.json")
        assert rewards[label] == json.loads(golden)["reward"]
        score = SubmissionScore.objects.get(run=run, submission__label=label)
        assert bytes(score.reward_json) == golden, label
        assert client.get(f"/api/scores/{score.pk}/files/reward.json").content == golden


@pytest.mark.django_db
def test_the_older_verifier_is_reproduced_by_egocentric_f1_v1(gtea_version, maintainer):
    folder = EGOCENTRIC / "_older_versions/157e7b4/calibration/rollouts"
    path = folder / "codex-gpt-5.6-sol.solution.json"
    subs = upload(gtea_version.packet, maintainer, {"codex (old verifier)": path.read_bytes()})
    score = scored(gtea_version, subs, maintainer, scorer_id="egocentric-f1-v1")["codex (old verifier)"]
    assert bytes(score.reward_json) == (folder / "codex-gpt-5.6-sol.reward.json").read_bytes()
