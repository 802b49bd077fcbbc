"""A write that holds a packet (``access_packet(..., for_update=True)``) does not hold up an
audit append that names the packet (its foreign key is checked with ``FOR KEY SHARE``).

Before, a scoring run starting on a packet (holding it, then waiting for the audit chain's
lock) and a scoring worker sealing scores of the same packet (holding the chain's lock, then
checking the packet's key) deadlocked, and the start answered 503 again and again
(``bench/faults.py`` found it). PostgreSQL only: SQLite has no row locks."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from annotator.models import AuditEntry
from annotator.models.audit_log import record
from annotator.reads.access import access_packet
from tests.conftest import database_url
from tests.factories import make_packet

pytestmark = pytest.mark.skipif(not database_url().startswith("postgres"), reason="row locks are PostgreSQL's")


@pytest.mark.django_db(transaction=True)
def test_an_audit_append_naming_a_packet_is_not_held_up_by_a_writer_holding_the_packet(
    maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    outcome: list = []

    def append() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '3s'")
                record(None, "probe", packet, packet=packet)
            outcome.append("appended")
        except Exception as error:  # noqa: BLE001 - the test reports it
            outcome.append(f"{type(error).__name__}: {error}")
        finally:
            connection.close()

    with transaction.atomic():
        access_packet(maintainer, packet.pk, for_update=True)  # held until this block ends
        other = threading.Thread(target=append)
        other.start()
        other.join(timeout=20)
    assert outcome == ["appended"]
    assert AuditEntry.objects.filter(operation="probe").count() == 1
