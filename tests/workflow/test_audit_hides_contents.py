"""A maintainer's packet audit log shows progress, not contents, before both ledgers freeze:
a deleted event's data is left out of ``GET /api/packets/<id>/audit/`` (as the pages do)
until then, and shown once both are frozen."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_delete_event
from annotator.models import Ledger
from tests.factories import client_for, without_digests_and_times
from tests.integrity.conftest import B_EVENTS, fill_and_freeze

pytestmark = pytest.mark.django_db

SECRET = {"verb": "take", "nouns": ["cup"], "start_frame": 4321, "end_frame": 4400}


def deleted_entries(client, packet) -> list[dict]:
    response = client.get(f"/api/packets/{packet.pk}/audit/")
    assert response.status_code == 200
    return [e for e in response.json() if e["operation"] == "delete_event"]


def test_deleted_event_contents_are_hidden_until_both_ledgers_freeze(packet, annotator_a, annotator_b, maintainer):
    ledger = Ledger.objects.get(packet=packet, side="A")
    event = do_add_event(ledger, SECRET, actor=annotator_a, expected_version=0)
    do_delete_event(ledger, event.uid, actor=annotator_a, expected_version=1)
    client = client_for(maintainer)
    [entry] = deleted_entries(client, packet)
    assert "data" not in entry["details"]
    shown = without_digests_and_times(str(entry))
    assert "4321" not in shown and "4400" not in shown
    ledger.refresh_from_db()
    fill_and_freeze(packet, "B", annotator_b, B_EVENTS)
    [entry] = deleted_entries(client, packet)
    assert "data" not in entry["details"]  # one ledger frozen is not both
    ledger.refresh_from_db()
    fill_and_freeze_from(ledger, annotator_a)
    [entry] = deleted_entries(client, packet)
    assert entry["details"]["data"] == SECRET


def fill_and_freeze_from(ledger, user):
    from annotator.actions.ledgers import do_freeze_ledger
    from tests.integrity.conftest import ATTESTATION

    return do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=ledger.version)
