"""Many writers on one ledger: optimistic concurrency loses no update (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from annotator.models import Ledger, LedgerEvent
from tests.factories import client_for

WRITERS = 12
EVENTS_EACH = 5


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_lose_no_update(packet, annotator_a):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (the CI run does)")
    start = threading.Barrier(WRITERS)
    outcomes: list[tuple[int, int]] = []  # (accepted, refused as stale) per writer
    errors: list[BaseException] = []

    def writer(number: int) -> None:
        try:
            client = client_for(annotator_a)
            accepted = refused = 0
            start.wait()
            while accepted < EVENTS_EACH:
                version = client.get(f"/api/packets/{packet.pk}/ledger/").json()["version"]
                event = {"verb": "take", "nouns": ["cup"], "start_frame": number * 100 + accepted, "end_frame": 20000}
                response = client.post(
                    f"/api/packets/{packet.pk}/ledger/events/", {"data": event, "version": version}, format="json"
                )
                if response.status_code == 201:
                    accepted += 1
                elif response.status_code == 412:
                    refused += 1
                else:
                    raise AssertionError(response.content)
            outcomes.append((accepted, refused))
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors[0]
    ledger = Ledger.objects.get(packet=packet, side="A")
    accepted = sum(a for a, _ in outcomes)
    assert accepted == WRITERS * EVENTS_EACH
    assert LedgerEvent.objects.filter(ledger=ledger).count() == accepted
    # Every accepted write moved the version by exactly one: nothing was applied twice or lost.
    assert ledger.version == accepted
    starts = sorted(LedgerEvent.objects.filter(ledger=ledger).values_list("data__start_frame", flat=True))
    assert starts == sorted(n * 100 + k for n in range(WRITERS) for k in range(EVENTS_EACH))
    assert sum(r for _, r in outcomes) > 0, "the writers never collided; the test proved nothing"
