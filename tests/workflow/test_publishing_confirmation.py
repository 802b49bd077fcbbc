# ruff: noqa: F811  (the fixtures imported from tests.integrity.conftest are parameters here)
"""Issue 14, publishing: the confirmation preview (counts by decision, the changelog
against the previous version of the same tier), "unpublished changes" after a decision
changes, distinct labels per tier, "published vN" on every role's packet view, and the
adjudication log exported next to gt.json with the hash the manifest names."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest

from annotator.models import GroundTruthVersion
from tests.factories import client_for
from tests.integrity.conftest import adjudicated, frozen, provisional  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def _decide_all(client, packet):
    items = client.get(f"/api/packets/{packet.pk}/union/").json()["items"]
    for item in items:
        if item["status"] == "agreed":
            continue
        action = "take_a" if item["a_value"] else "drop"
        answer = client.post(
            f"/api/packets/{packet.pk}/union/items/{item['position']}/decision/",
            {"action": action, "rationale": f"seen at item {item['position']}"},
            format="json",
        )
        assert answer.status_code == 200, answer.content
    return items


def test_preview_before_the_first_publication_counts_decisions_and_writes_nothing(
    packet,
    frozen,
    adjudicator,
):
    client = client_for(adjudicator)
    assert client.post(f"/api/packets/{packet.pk}/union/").status_code == 200
    waiting = client.get(f"/api/packets/{packet.pk}/publish/").json()
    assert waiting["publishable"] is False and waiting["undecided"] == 3
    items = _decide_all(client, packet)

    preview = client.get(f"/api/packets/{packet.pk}/publish/")
    assert preview.status_code == 200, preview.content
    body = preview.json()
    # A: take/put@1000/cut; B: take/put@1020/open -> agreed, conflicting (take A), a_only (take A), b_only (drop)
    assert body["items"] == len(items) == 4
    assert body["decisions"] == {"agreed": 1, "take_a": 2, "take_b": 0, "edit": 0, "drop": 1, "unknown": 0}
    assert (body["publishable"], body["undecided"], body["events"]) == (True, 0, 3)
    assert body["label"] == "adjudicated v1" and body["previous"] is None
    assert body["unchanged"] is False and body["unpublished_changes"] is False
    assert body["changelog"]["added"] == 3
    assert not GroundTruthVersion.objects.filter(packet=packet).exists()

    published = client.post(f"/api/packets/{packet.pk}/publish/")
    assert published.status_code == 201
    assert published.json()["label"] == "adjudicated v1"
    assert published.json()["number"] == 1


def test_a_changed_decision_shows_as_unpublished_changes_with_a_changelog(
    packet,
    adjudicated,
    adjudicator,
):
    client = client_for(adjudicator)
    settled = client.get(f"/api/packets/{packet.pk}/publish/").json()
    assert (settled["unchanged"], settled["unpublished_changes"], settled["label"]) == (True, False, "adjudicated v1")

    a_only = packet.union.items.get(status="a_only")
    answer = client.post(
        f"/api/packets/{packet.pk}/union/items/{a_only.position}/decision/",
        {"action": "drop", "rationale": "the cut is off screen"},
        format="json",
    )
    assert answer.status_code == 200
    body = client.get(f"/api/packets/{packet.pk}/publish/").json()
    assert body["unpublished_changes"] is True and body["unchanged"] is False
    assert body["label"] == "adjudicated v2"
    assert body["previous"]["label"] == "adjudicated v1" and body["previous"]["id"] == adjudicated.pk
    assert (body["changelog"]["added"], body["changelog"]["removed"], body["changelog"]["kept"]) == (0, 1, 2)
    assert body["changelog"]["removed_events"][0]["verb"] == "cut"
    assert body["decisions"]["drop"] == 2

    # What the preview said is what publishing stores.
    version = client.post(f"/api/packets/{packet.pk}/publish/").json()
    assert version["label"] == body["label"]
    assert version["changelog"] == body["changelog"]


def test_maintainer_may_preview_annotators_and_outsiders_may_not(
    packet,
    adjudicated,
    maintainer,
    annotator_a,
    outsider,
):
    assert client_for(maintainer).get(f"/api/packets/{packet.pk}/publish/").status_code == 200
    for person in (annotator_a, outsider):
        assert client_for(person).get(f"/api/packets/{packet.pk}/publish/").status_code == 404


def test_version_labels_differ_per_tier(packet, adjudicated, provisional, maintainer):
    versions = client_for(maintainer).get(f"/api/packets/{packet.pk}/versions/").json()
    labels = sorted(v["label"] for v in versions)
    assert labels == ["adjudicated v1", "provisional v1"]


def test_every_role_sees_published_version_on_the_packet(
    packet,
    frozen,
    adjudicator,
    annotator_a,
    annotator_b,
    maintainer,
):
    assert client_for(annotator_a).get(f"/api/packets/{packet.pk}/").json()["published"] is None
    client = client_for(adjudicator)
    client.post(f"/api/packets/{packet.pk}/union/")
    _decide_all(client, packet)
    client.post(f"/api/packets/{packet.pk}/publish/")
    for person in (annotator_a, annotator_b, adjudicator, maintainer):
        listed = client_for(person).get("/api/packets/").json()
        assert [p["published"]["label"] for p in listed] == ["adjudicated v1"]


def test_export_holds_the_adjudication_log_the_manifest_hashes(packet, adjudicated, maintainer):
    answer = client_for(maintainer).get(f"/api/versions/{adjudicated.pk}/export/")
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    files = {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}
    assert "adjudication_log.json" in files
    log_bytes = files["adjudication_log.json"]
    manifest = json.loads(files["manifest.json"])
    assert hashlib.sha256(log_bytes).hexdigest() == manifest["manifest"]["adjudication_log_sha256"]
    assert manifest["files"]["adjudication_log.json"]["sha256"] == hashlib.sha256(log_bytes).hexdigest()
    log = json.loads(log_bytes)
    assert [entry["action"] for entry in log] == ["agreed", "take_a", "take_a", "drop"]
    assert {entry["rationale"] for entry in log if entry["action"] != "agreed"} == {"checked against the video"}


def test_provisional_export_has_no_adjudication_log(packet, provisional, maintainer):
    answer = client_for(maintainer).get(f"/api/versions/{provisional.pk}/export/?file=adjudication_log.json")
    assert answer.status_code == 404
