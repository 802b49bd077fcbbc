"""The whole blind two-annotator protocol, driven through the HTTP API only."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from scoring import score_submission
from tests.factories import client_for

A_EVENTS = [
    {"verb": "take", "nouns": ["oil_container"], "start_frame": 100, "end_frame": 140},
    {"verb": "pour", "nouns": ["oil", "skillet"], "start_frame": 150, "end_frame": 220},
    {"verb": "open", "nouns": ["fridge"], "start_frame": 400, "end_frame": 430},
]
B_EVENTS = [
    {"verb": "take", "nouns": ["oil_container"], "start_frame": 100, "end_frame": 140},  # agreed
    {"verb": "pour", "nouns": ["oil", "skillet"], "start_frame": 158, "end_frame": 221},  # boundaries differ
    {"verb": "close", "nouns": ["fridge"], "start_frame": 900, "end_frame": 950},  # B only
]


def add_events(client, packet_id, events):
    ledger = client.get(f"/api/packets/{packet_id}/ledger/")
    assert ledger.status_code == 200
    etag = ledger["ETag"]
    for event in events:
        response = client.post(
            f"/api/packets/{packet_id}/ledger/events/", {"data": event}, format="json", HTTP_IF_MATCH=etag
        )
        assert response.status_code == 201, response.content
        etag = response["ETag"]
    return etag


@pytest.mark.django_db
def test_protocol_runs_from_packet_to_export_through_the_api(packet, annotator_a, annotator_b, adjudicator, maintainer):
    a, b, adj, boss = (client_for(u) for u in (annotator_a, annotator_b, adjudicator, maintainer))
    etag_a = add_events(a, packet.pk, A_EVENTS)
    etag_b = add_events(b, packet.pk, B_EVENTS)

    # Before both freeze, nobody gets a union.
    assert adj.post(f"/api/packets/{packet.pk}/union/").status_code == 404

    attestation = {"attestation": "I labelled this video alone, from the video only."}
    freeze_a = a.post(f"/api/packets/{packet.pk}/ledger/freeze/", attestation, format="json", HTTP_IF_MATCH=etag_a)
    assert freeze_a.status_code == 200, freeze_a.content
    assert len(freeze_a.json()["sha256"]) == 64
    assert (
        b.post(f"/api/packets/{packet.pk}/ledger/freeze/", attestation, format="json", HTTP_IF_MATCH=etag_b).status_code
        == 200
    )

    union = adj.post(f"/api/packets/{packet.pk}/union/")
    assert union.status_code == 200, union.content
    items = union.json()["items"]
    statuses = sorted(item["status"] for item in items)
    assert statuses == ["a_only", "agreed", "b_only", "conflicting"]
    conflicting = next(item for item in items if item["status"] == "conflicting")
    assert conflicting["boundary_deltas"] == {"start_frame": 8, "end_frame": 1}

    # Publishing waits for every decision.
    refused = adj.post(f"/api/packets/{packet.pk}/publish/")
    assert refused.status_code == 409
    assert "need a decision" in refused.json()["error"]["message"]

    decisions = {
        "conflicting": {
            "action": "edit",
            "final_value": {**A_EVENTS[1], "start_frame": 154},
            "rationale": "pour starts at 154",
        },
        "a_only": {"action": "take_a", "rationale": "fridge opens at 400"},
        "b_only": {"action": "drop", "rationale": "no close visible at 900"},
    }
    for item in items:
        if item["status"] in decisions:
            response = adj.post(
                f"/api/packets/{packet.pk}/union/items/{item['position']}/decision/",
                decisions[item["status"]],
                format="json",
            )
            assert response.status_code == 200, response.content

    published = adj.post(f"/api/packets/{packet.pk}/publish/")
    assert published.status_code == 201, published.content
    version = published.json()
    assert version["tier"] == "adjudicated" and version["number"] == 1
    manifest = version["manifest"]
    assert manifest["ledger_a_sha256"] == freeze_a.json()["sha256"]
    assert manifest["packet_sha256"] == packet.sha256
    assert len(manifest["adjudication_log_sha256"]) == 64

    export = boss.get(version["export_url"])
    assert export.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(export.content))
    files = {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}
    assert sorted(files) == [
        "adjudication_log.json",
        "gt.json",
        "manifest.json",
        "oracle.json",
        "signature.json",
        "vocabulary.json",
    ]
    gt = json.loads(files["gt.json"])
    assert gt["actions"] == [A_EVENTS[0], {**A_EVENTS[1], "start_frame": 154}, A_EVENTS[2]]
    result = score_submission("egocentric-f1-v2", gt, files["oracle.json"], frame_count=packet.video.frame_count)
    assert result.reward == 1.0
    listed = json.loads(files["manifest.json"])["files"]
    assert listed["gt.json"]["bytes"] == len(files["gt.json"])
