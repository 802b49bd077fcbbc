"""A decision names the decision the page saw (``replaces``): one recorded since is not
overwritten in silence (412, nothing changed); without ``replaces`` nothing is checked."""

from __future__ import annotations

import pytest

from annotator.models import AuditEntry, Decision
from tests.factories import client_for
from tests.workflow.test_protocol_api import A_EVENTS, B_EVENTS, add_events


def frozen_union(packet, annotator_a, annotator_b, adjudicator):
    attestation = {"attestation": "I labelled this video alone, from the video only."}
    for user, events in ((annotator_a, A_EVENTS), (annotator_b, B_EVENTS)):
        client = client_for(user)
        etag = add_events(client, packet.pk, events)
        freeze = client.post(f"/api/packets/{packet.pk}/ledger/freeze/", attestation, format="json", HTTP_IF_MATCH=etag)
        assert freeze.status_code == 200, freeze.content
    adj = client_for(adjudicator)
    items = adj.post(f"/api/packets/{packet.pk}/union/").json()["items"]
    return adj, next(item["position"] for item in items if item["status"] == "a_only")


@pytest.mark.django_db
def test_a_decision_recorded_since_the_page_saw_the_item_is_not_overwritten(
    packet, annotator_a, annotator_b, adjudicator
):
    adj, position = frozen_union(packet, annotator_a, annotator_b, adjudicator)
    url = f"/api/packets/{packet.pk}/union/items/{position}/decision/"
    first = adj.post(url, {"action": "take_a", "rationale": "the fridge opens", "replaces": None}, format="json")
    assert first.status_code == 200, first.content
    seen = first.json()["decision"]["decided_at"]

    # A second tab that still saw no decision: refused, nothing changed.
    stale = adj.post(url, {"action": "drop", "rationale": "nothing there", "replaces": None}, format="json")
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "stale_version"
    assert "adjudicator decided this item meanwhile (take a)" in stale.json()["error"]["message"]
    assert Decision.objects.get(item__position=position, item__union__packet=packet).action == "take_a"
    assert AuditEntry.objects.filter(operation="decide_item").count() == 1

    # Naming the decision it replaces: recorded.
    again = adj.post(url, {"action": "drop", "rationale": "nothing there", "replaces": seen}, format="json")
    assert again.status_code == 200, again.content
    assert again.json()["decision"]["action"] == "drop"
    # Without "replaces" (older clients, scripts) nothing is checked.
    plain = adj.post(url, {"action": "take_a", "rationale": "the fridge opens"}, format="json")
    assert plain.status_code == 200
