"""Two frozen ledgers of many events, for the tests at the ledger cap: the events are
inserted in one statement per side (the save path's own checks are the subject of
``test_ledger_event_cap``), then each ledger is frozen by ``do_freeze_ledger``."""

from __future__ import annotations

from annotator.actions.ledgers import do_freeze_ledger
from annotator.models import Ledger, LedgerEvent

FRAMES = 40 * 5000 + 100
ATTESTATION = "I labelled this video alone, from the video only."


def action(k: int, verb: str = "take") -> dict:
    """Actions far apart (more than any tolerance): on a video of ``FRAMES`` frames."""
    return {"verb": verb, "nouns": ["cup"], "start_frame": 40 * k, "end_frame": 40 * k + 10}


def freeze_with(packet, side: str, events: list[dict]) -> Ledger:
    ledger = Ledger.objects.get(packet=packet, side=side)
    LedgerEvent.objects.bulk_create([LedgerEvent(ledger=ledger, data=event) for event in events], batch_size=1000)
    Ledger.objects.filter(pk=ledger.pk).update(version=len(events))
    ledger.refresh_from_db()
    return do_freeze_ledger(ledger, actor=ledger.annotator, attestation=ATTESTATION, expected_version=len(events))


def frozen_pair(packet, count: int, *, every: int) -> None:
    """Both sides frozen with ``count`` actions; B's verb differs on every ``every``-th."""
    freeze_with(packet, "A", [action(k) for k in range(count)])
    freeze_with(packet, "B", [action(k, "put" if k % every == 0 else "take") for k in range(count)])
