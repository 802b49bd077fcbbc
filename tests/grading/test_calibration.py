"""Calibration anchors are computed once a version's publication commits; a version whose oracle
is not 1.0 (or whose empty submission is not 0.0) cannot be marked ready."""

from __future__ import annotations

import pytest

from annotator.actions.versions import do_import_provisional_version
from annotator.models import AuditEntry, VersionCalibration, VersionReadiness
from tests.factories import after_commit, client_for


def anchor_table(version) -> dict[str, float]:
    calibration = VersionCalibration.objects.get(version=version, scorer_id=version.packet.task_kind.scorer_id)
    return {row["name"]: row["reward"] for row in calibration.anchors}


@pytest.mark.django_db
def test_importing_gtea_computes_the_published_anchors_and_the_version_can_be_marked_ready(gtea_version, maintainer):
    # SCORING.md section 1: the anchors the seed reports on the published ground truth.
    table = anchor_table(gtea_version)
    expected = {"oracle": 1.0, "empty": 0.0, "shift_plus_12": 1.0, "shift_plus_13": 0.0, "reversed": 0.005814,
                "duplicated": 0.666667}  # fmt: skip
    assert {name: table[name] for name in expected} == expected
    assert set(table) >= {"random_vocabulary", "fixed_prior"}
    client = client_for(maintainer)
    body = client.get(f"/api/versions/{gtea_version.pk}/calibration/").json()
    (calibration,) = body["calibrations"]
    assert (calibration["status"], calibration["problems"], body["ready"]) == ("ok", [], None)
    assert calibration["params"] == {"frame_count": 25692, "tolerance": 12}
    response = client.post(f"/api/versions/{gtea_version.pk}/ready/")
    assert response.status_code == 201 and response.json()["marked_by"] == "maintainer"
    assert client.post(f"/api/versions/{gtea_version.pk}/ready/").status_code == 409
    assert AuditEntry.objects.filter(operation="mark_version_ready", object_id=str(gtea_version.pk)).exists()


@pytest.mark.django_db
def test_the_tennis_fixed_prior_anchor_is_the_published_baseline(tennis_version):
    table = anchor_table(tennis_version)
    assert (table["oracle"], table["empty"]) == (1.0, 0.0)
    assert table["fixed_prior"] == 0.1833  # baselines/score-result-prior-v4-exact


@pytest.mark.django_db
def test_an_oracle_that_does_not_score_one_blocks_ready_and_says_why(gtea_packet, maintainer):
    # 2001 actions: valid ground truth, but over the scorer's 2000-entry cap, so the
    # ground truth submitted as a solution is rejected whole and scores 0.
    events = [{"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5} for k in range(2001)]
    with after_commit():
        version = do_import_provisional_version(
            gtea_packet, events, actor=maintainer, source="x", source_sha256="2" * 64
        )
    calibration = VersionCalibration.objects.get(version=version)
    assert calibration.status == "blocked"
    assert calibration.problems == [
        "oracle scores 0.0, expected 1.0: the ground truth submitted as a solution must score 1.0"
    ]
    client = client_for(maintainer)
    response = client.post(f"/api/versions/{version.pk}/ready/")
    assert response.status_code == 409
    assert response.json()["error"]["message"] == "the version cannot be marked ready: " + calibration.problems[0]
    assert not VersionReadiness.objects.exists()
    shown = client.get(f"/api/versions/{version.pk}/calibration/").json()["calibrations"][0]
    assert shown["status"] == "blocked" and [a["ok"] for a in shown["anchors"] if a["name"] == "oracle"] == [False]


@pytest.mark.django_db
def test_anchors_can_be_computed_for_another_scorer_and_only_maintainers_see_them(tennis_version, annotator_a):
    client = client_for(tennis_version.packet.created_by)
    response = client.post(
        f"/api/versions/{tennis_version.pk}/calibration/", {"scorer_id": "hierarchical-bottleneck-v2"}, format="json"
    )
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert {c.scorer_id for c in tennis_version.calibrations.all()} == {
        "hierarchical-bottleneck-v1",
        "hierarchical-bottleneck-v2",
    }
    bad = client.post(
        f"/api/versions/{tennis_version.pk}/calibration/", {"scorer_id": "moment-utility-v1"}, format="json"
    )
    assert bad.status_code == 400
    assert client_for(annotator_a).get(f"/api/versions/{tennis_version.pk}/calibration/").status_code == 404
