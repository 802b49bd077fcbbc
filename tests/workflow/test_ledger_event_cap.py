"""The cap on events per ledger holds with the save path's shortcut (no COUNT(*) while the
ledger's version is below the cap: each add bumps the version, so events <= version)."""

from __future__ import annotations

import pytest

from annotator.actions import ledgers
from annotator.models import Ledger
from tests.factories import client_for

pytestmark = pytest.mark.django_db


def save(client, packet, version, k):
    event = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5}}
    return client.post(f"/api/packets/{packet.pk}/ledger/events/", event, format="json", HTTP_IF_MATCH=f'"{version}"')


def test_the_cap_refuses_one_event_too_many_and_counts_after_deletes(packet, annotator_a, monkeypatch):
    monkeypatch.setattr(ledgers, "MAX_EVENTS_PER_LEDGER", 3)
    client = client_for(annotator_a)
    etag = client.get(f"/api/packets/{packet.pk}/ledger/")["ETag"]
    uids = []
    for k in range(3):
        response = save(client, packet, etag.strip('"'), k)
        assert response.status_code == 201, response.content
        etag = response["ETag"]
        uids.append(response.json()["event"]["uid"])
    refused = save(client, packet, etag.strip('"'), 3)
    assert refused.status_code == 409 and "at most 3 events" in refused.json()["error"]["message"]
    deleted = client.delete(f"/api/packets/{packet.pk}/ledger/events/{uids[0]}/", HTTP_IF_MATCH=etag)
    assert deleted.status_code == 200, deleted.content
    again = save(client, packet, deleted["ETag"].strip('"'), 4)  # version 4 >= cap, but 2 events: room
    assert again.status_code == 201, again.content
    ledger = Ledger.objects.get(packet=packet, annotator=annotator_a)
    assert ledger.events.count() == 3 and ledger.version == 5
