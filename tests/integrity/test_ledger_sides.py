"""A packet is made with one ledger A and one ledger B, never changed since. A side changed or a
ledger deleted by SQL is an integrity error naming the packet wherever the packet is read (its
view, the dashboard, a ledger by side, the leaderboard's human rows), never a ``KeyError``
answered as another 500 and never a packet read with a ledger left out."""

from __future__ import annotations

import pytest
from django.test import Client

from annotator.models import AuditEntry, Ledger, LedgerEvent
from tests.factories import client_for
from tests.integrity.tampering import remove, tamper, triggers_off

pytestmark = pytest.mark.django_db


def assert_integrity_error(response, packet) -> None:
    assert response.status_code == 500, response.content[:300]
    assert response.json()["error"]["code"] == "integrity_error"
    assert f"packet {packet.pk}: its ledgers are not one side A and one side B" in response.json()["error"]["message"]


def page(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def remove_ledger(ledger) -> None:
    with triggers_off(LedgerEvent._meta.db_table):
        LedgerEvent.objects.filter(ledger=ledger).delete()
    remove(ledger)


@pytest.mark.parametrize("change", ["side changed", "ledger deleted"])
def test_an_open_packet_with_a_ledger_side_changed_or_deleted_is_an_integrity_error(
    change, packet, maintainer, annotator_a, adjudicator
):
    ledger_b = Ledger.objects.get(packet=packet, side="B")
    tamper(ledger_b, side="C") if change == "side changed" else remove_ledger(ledger_b)
    for user in (maintainer, annotator_a, adjudicator):
        assert_integrity_error(client_for(user).get(f"/api/packets/{packet.pk}/"), packet)
    dashboard = page(maintainer).get("/dashboard/")
    assert dashboard.status_code == 500 and dashboard["X-FrameLedger-Error"] == "integrity_error"
    assert f"packet {packet.pk}: its ledgers are not one side A and one side B" in dashboard.content.decode()
    assert AuditEntry.objects.filter(operation="integrity_error", object_type="annotator.Packet").exists()


def test_a_frozen_ledger_deleted_is_an_integrity_error_not_a_missing_human_row(
    packet, frozen, adjudicated, maintainer, adjudicator
):
    url = f"/api/versions/{adjudicated.pk}/leaderboard/"
    assert client_for(maintainer).get(url).status_code == 200
    remove_ledger(frozen["B"])
    assert_integrity_error(client_for(maintainer).get(url), packet)
    assert_integrity_error(client_for(adjudicator).get(f"/api/packets/{packet.pk}/ledgers/A/"), packet)
