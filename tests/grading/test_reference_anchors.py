"""Calibration of moment versions with the reference system: next to the oracle, empty,
whole-video and random anchors, a constant-window prior and the retrieval module's
zero-shot ranker, scored like submissions; the leaderboard lists them as reference rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.base.grading.reference_anchors import constant_window_rows, zero_shot_rows
from annotator.models import VersionCalibration
from annotator.reads.export import export_files
from annotator.reads.grading_inputs import task_parameters
from annotator.reads.moment_corpus import moment_corpus
from scoring import score_submission
from tests.factories import after_commit, body_of, client_for
from tests.grading.test_bundles import synthetic_version
from tests.grading.test_moment_imports import QV_VAL, people
from tests.media.conftest import eager_celery  # noqa: F401  (Celery tasks inline)


def anchors_of(version) -> dict:
    calibration = VersionCalibration.objects.get(version=version, scorer_id="moment-utility-v1")
    assert calibration.status == "ok", calibration.problems
    return {row["name"]: row for row in calibration.anchors}


@pytest.mark.django_db
def test_a_version_with_features_is_calibrated_with_the_zero_shot_ranker(
    maintainer, annotator_a, annotator_b, adjudicator, settings
):
    # Publishing (the provisional import) queues the anchors, the retrieval row included.
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    anchors = anchors_of(version)
    assert list(anchors)[:2] == ["oracle", "empty"] and anchors["oracle"]["reward"] == 1.0
    assert {"whole_video", "random_grid_interval", "constant_window_prior", "retrieval_zero_shot"} <= set(anchors)
    gt = json.loads(export_files(version)["gt.json"])
    params = task_parameters(version.packet, "moment-utility-v1")
    records, features, requests = moment_corpus(version)
    rows = zero_shot_rows(records, features, requests, "hash")
    assert len(rows.splitlines()) == len(requests)
    expected = score_submission("moment-utility-v1", gt, rows, **params).reward
    assert anchors["retrieval_zero_shot"]["reward"] == expected > anchors["empty"]["reward"]
    assert "hash" in anchors["retrieval_zero_shot"]["description"]
    prior = constant_window_rows(requests, params)
    assert [(r["start"], r["end"]) for r in map(json.loads, prior.splitlines())] == [(40.0, 80.0)] * len(requests)
    assert (
        anchors["constant_window_prior"]["reward"] == score_submission("moment-utility-v1", gt, prior, **params).reward
    )
    assert anchors["retrieval_zero_shot"]["ok"] is None  # a reference point, not an expectation

    board = client_for(maintainer).get(f"/api/versions/{version.pk}/leaderboard/").json()
    references = {row["label"]: row for row in board["references"]}
    assert references["anchor/retrieval_zero_shot"]["reward"] == expected
    assert references["anchor/oracle"]["kind"] == "reference" and references["anchor/oracle"]["rank"] is None
    assert board["rows"] == []  # nothing submitted: the ranked rows are agents and humans only
    exported = body_of(client_for(maintainer).get(f"/api/versions/{version.pk}/leaderboard.csv")).decode()
    lines = exported.splitlines()
    assert len(lines) == 1 + len(board["references"])  # the header, then the reference rows (unranked)
    assert any(line.startswith(",reference,anchor/retrieval_zero_shot,") for line in lines)


@pytest.mark.django_db
def test_without_features_the_retrieval_row_says_why(maintainer, annotator_a, annotator_b, adjudicator):
    from django.core.management import call_command

    with after_commit():
        call_command(
            "import_moments", str(QV_VAL), "--source=qvhighlights", "--limit-videos=1",
            *people(annotator_a, annotator_b, adjudicator), stdout=__import__("io").StringIO(),
        )  # fmt: skip
    version = VersionCalibration.objects.get().version
    anchors = anchors_of(version)
    assert anchors["retrieval_zero_shot"]["reward"] is None
    assert anchors["retrieval_zero_shot"]["description"].startswith("not computed: the packet has no frame features")
    assert anchors["constant_window_prior"]["reward"] is not None
    board = client_for(maintainer).get(f"/api/versions/{version.pk}/leaderboard/").json()
    assert "anchor/retrieval_zero_shot" not in {row["label"] for row in board["references"]}


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_celery")
def test_features_uploaded_later_compute_the_zero_shot_anchor(
    maintainer, annotator_a, annotator_b, adjudicator, django_capture_on_commit_callbacks
):
    """An annotation-only import has no features: its zero-shot anchor is "not computed"
    until a maintainer uploads CLIP features for the video; then (after commit, in the
    worker) the version's anchors are computed again with them."""
    import io
    import math

    import numpy as np
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    with after_commit():
        call_command(
            "import_moments", str(QV_VAL), "--source=qvhighlights", "--limit-videos=1",
            *people(annotator_a, annotator_b, adjudicator), stdout=io.StringIO(),
        )  # fmt: skip
    version = VersionCalibration.objects.get().version
    assert anchors_of(version)["retrieval_zero_shot"]["reward"] is None
    video = version.packet.video
    rows = math.ceil(float(video.duration) / 2)
    buffer = io.BytesIO()
    np.save(buffer, np.random.default_rng(3).standard_normal((rows, 512)).astype("float32"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(maintainer).post(
            f"/api/videos/{video.pk}/search-index/",
            {"features": SimpleUploadedFile("clip.npy", buffer.getvalue()), "clip_length": "2"},
        )
    assert response.status_code == 202, response.content
    zero_shot = anchors_of(version)["retrieval_zero_shot"]
    assert zero_shot["reward"] is not None and "hash" in zero_shot["description"], zero_shot
    records, features, _ = moment_corpus(version)
    assert records[0]["clip_length"] == 2.0 and len(features) == 1
