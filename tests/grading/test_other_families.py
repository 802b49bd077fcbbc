"""The break-point agreement path and the moment-query family end to end (upload, score,
diagnostics, anchors), beside the action-ledger cases of the other modules."""

from __future__ import annotations

import json

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.versions import do_import_provisional_version
from annotator.models import Ledger, VersionCalibration
from tests.factories import after_commit, client_for, make_packet, make_ready_video
from tests.grading.conftest import ATTESTATION, TENNIS_ORACLE, scored, upload


def freeze(packet, side, user, events):
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, event in enumerate(events):
        do_add_event(ledger, event, actor=user, expected_version=version)
    with after_commit():  # the second freeze leaves the agreement report for after its commit
        do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(events))


@pytest.mark.django_db
def test_break_point_agreement_has_kappa_per_field_and_the_humans_join_the_board(
    tennis_version, maintainer, annotator_a, annotator_b
):
    oracle = json.loads(TENNIS_ORACLE.read_bytes())["break_points"]
    a_events = oracle[:4]
    b_events = [dict(e) for e in oracle[:4]]
    b_events[1]["serve_direction"] = "body" if b_events[1]["serve_direction"] != "body" else "wide"
    freeze(tennis_version.packet, "A", annotator_a, a_events)
    freeze(tennis_version.packet, "B", annotator_b, b_events)
    client = client_for(maintainer)
    body = client.get(f"/api/packets/{tennis_version.packet_id}/agreement/").json()
    assert body["version"] is None  # nothing adjudicated yet; the provisional tier is not the reference
    a_vs_b = body["a_vs_b"]
    assert a_vs_b["union"] == {"agreed": 3, "conflicting": 1, "a_only": 0, "b_only": 0}
    assert a_vs_b["kappa"]["set"] == 1.0 and a_vs_b["kappa"]["serve_direction"] < 1.0
    assert a_vs_b["shot_count_differences"]["histogram"] == {"0": 4}
    board = client.get(f"/api/versions/{tennis_version.pk}/leaderboard/").json()
    humans = {r["label"]: r["reward"] for r in board["rows"] if r["kind"] == "human"}
    # Four of the sixteen break points, exactly (A) or with one summary field wrong (B).
    assert humans["annotator A (annotator_a)"] == round(2 * 4 / 20, 4)
    assert humans["annotator B (annotator_b)"] < humans["annotator A (annotator_a)"]


@pytest.mark.django_db
def test_moment_queries_are_graded_with_the_videos_grid(maintainer, annotator_a, annotator_b, adjudicator):
    video = make_ready_video("moments", frame_count=1440, fps=(24, 1))  # 60 s, grid step 2 s
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=video)
    queries = [
        {"query_id": "q1", "query": "a person opens the door", "intervals": [[4.0, 10.0]]},
        {"query_id": "q2", "query": "a dog runs", "intervals": [[30.0, 36.0]]},
    ]
    with after_commit():
        version = do_import_provisional_version(packet, queries, actor=maintainer, source="t", source_sha256="4" * 64)
    calibration = VersionCalibration.objects.get(version=version)
    assert calibration.status == "ok", calibration.problems
    rows = b'{"query_id": "q1", "start": 4.0, "end": 10.0}\n{"query_id": "q2", "start": 31.0, "end": 36.0}\n'
    score = scored(version, upload(packet, maintainer, {"agent": rows}), maintainer)["agent"]
    assert score.reason == "0 missing, 1 invalid rows"  # 31.0 is off the 2-second grid
    body = client_for(maintainer).get(f"/api/scores/{score.pk}/diagnostics/").json()
    assert [r["status"] for r in body["reference"]] == ["matched", "missed"]
    assert body["reference"][1]["note"] == "invalid: endpoint off the video's grid"
    assert (body["predictions"][0]["start_frame"], body["predictions"][0]["end_frame"]) == (96, 240)
