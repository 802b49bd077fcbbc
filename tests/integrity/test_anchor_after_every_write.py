"""The signed head after every write, out of the database's reach: each committed write appends
its entry as a line ``SEQ:SHA256 TIME WHY key=… sig=…`` to the anchor log (outside the media and
the database) and to the ``annotator.audit`` log stream. Entries cut from the chain's end after
the last publication or check (a submission and its scoring, say) are then named by
``verify_integrity``, by default."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from annotator.base import signing
from annotator.models import AuditEntry, Ledger
from annotator.reads.anchors import anchor_path, anchors
from tests.integrity.tampering import remove, verify

pytestmark = pytest.mark.django_db


def add_events(packet, user, n: int) -> None:
    from annotator.actions.ledgers import do_add_event

    for k in range(n):
        ledger = Ledger.objects.get(packet=packet, side="A")
        data = {"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5}
        do_add_event(ledger, data, actor=user, expected_version=ledger.version)


def test_every_committed_write_appends_its_signed_head(packet, annotator_a, django_capture_on_commit_callbacks, caplog):
    with caplog.at_level(logging.INFO, logger="annotator.audit"):
        with django_capture_on_commit_callbacks(execute=True):
            add_events(packet, annotator_a, 3)
    entries = list(AuditEntry.objects.order_by("-seq")[:3])
    lines = {a.seq: a for a in anchors()}
    public = signing.keyring().keys[signing.current_key_id()]
    for entry in entries:
        anchor = lines[entry.seq]
        assert anchor.sha256 == entry.sha256 and "add_event annotator.LedgerEvent:" in anchor.text
        signature = anchor.text.split(" sig=")[1]
        public.verify(bytes.fromhex(signature), signing.ENTRY_CONTEXT + entry.sha256.encode())  # the signed head
        assert any(f"{entry.seq}:{entry.sha256}" in record.getMessage() for record in caplog.records)  # log stream


def test_the_anchor_log_is_outside_the_media_and_the_database_by_default(settings):
    settings.FRAMELEDGER_AUDIT_ANCHOR = ""
    assert anchor_path() == Path(settings.VAR_DIR) / "anchors" / "audit-anchors.log"
    assert not anchor_path().is_relative_to(settings.MEDIA_ROOT)


def test_entries_cut_from_the_end_after_the_last_check_are_named(
    packet, annotator_a, django_capture_on_commit_callbacks
):
    code, out = verify()
    assert code == 0, out  # a clean check: its head anchored as before
    with django_capture_on_commit_callbacks(execute=True):
        add_events(packet, annotator_a, 2)  # written after it, no publication since
    cut = list(AuditEntry.objects.order_by("-seq")[:2])
    for entry in cut:
        remove(entry)
    code, out = verify()
    assert code == 1
    for entry in cut:
        assert f"PROBLEM audit entry seq {entry.seq}: anchored as a chain head" in out, out
    assert "the chain was cut" in out
