"""Editing and freezing an annotator's own ledger.

Every write takes ``expected_version``: the ledger version the caller last saw.
A stale version is refused with ``StaleVersion`` and nothing changes, so two tabs
(or a retried save) can never overwrite each other's work silently.
Callers hold ``select_for_update`` on the ledger (``access_own_ledger(..., for_update=True)``
inside ``transaction.atomic``).
"""

from __future__ import annotations

import functools
import uuid

from django.db import transaction
from django.utils import timezone

from annotator.actions.derived import queue_agreement_report
from annotator.base.canonical import canonical_sha256
from annotator.base.errors import Conflict, InvalidInput, StaleVersion
from annotator.base.families import adapter_for
from annotator.base.seals import events_seal, row_seal
from annotator.models import Ledger, LedgerEvent
from annotator.models.audit_log import record
from annotator.models.taskkind_schema import EventInvalid, packet_schema, validate_event
from annotator.reads.anchors import anchor_on_commit
from annotator.reads.documents import ledger_document

MAX_EVENTS_PER_LEDGER = 5000
MIN_ATTESTATION_CHARS = 20


def validate_ledger_event(ledger: Ledger, data) -> dict:
    """Validate untrusted event data against the packet's task kind."""
    packet = ledger.packet
    try:
        return validate_event(
            packet_schema(packet), data, frame_count=packet.video.frame_count, duration=packet.video.duration
        )
    except EventInvalid as exc:
        raise InvalidInput(exc.reason, field=exc.field) from None


def _check_writable(ledger: Ledger, expected_version) -> None:
    if ledger.is_frozen:
        raise Conflict(f"ledger {ledger.side} is frozen (SHA-256 {ledger.sha256}); corrections are new versions")
    if not isinstance(expected_version, int) or isinstance(expected_version, bool):
        raise InvalidInput("the ledger version you last saw is required (If-Match or version)", field="version")
    if expected_version != ledger.version:
        raise StaleVersion(
            f"the ledger changed since version {expected_version} (now {ledger.version}); reload and reapply"
        )


def in_callers_transaction(func):
    """``transaction.atomic`` only when the caller has none. Callers normally hold one (with
    the ledger row locked): a nested ``atomic`` would add a SAVEPOINT and its RELEASE to every
    save for nothing, since every check that can refuse a save runs before the first write
    and the caller's transaction rolls back on any error."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if transaction.get_connection().in_atomic_block:
            return func(*args, **kwargs)
        with transaction.atomic():
            return func(*args, **kwargs)

    return wrapper


def max_ledger_events(packet) -> int:
    """The most events one ledger of ``packet`` holds: its family's (what the union and the
    agreement compare per side), never above ``MAX_EVENTS_PER_LEDGER``."""
    return min(MAX_EVENTS_PER_LEDGER, adapter_for(packet.task_kind.schema["family"]).max_events)


def _check_room(ledger: Ledger) -> None:
    # Only do_add_event creates events and each add bumps the version by one, so a ledger
    # has at most `version` events: below the cap, no COUNT(*) is needed.
    cap = max_ledger_events(ledger.packet)
    if ledger.version >= cap and ledger.events.count() >= cap:
        raise Conflict(f"a ledger holds at most {cap} events")


def _bump(ledger: Ledger) -> None:
    ledger.version += 1
    ledger.save(update_fields=["version", "updated_at"])


@in_callers_transaction
def do_add_event(ledger: Ledger, data, *, actor, expected_version) -> LedgerEvent:
    _check_writable(ledger, expected_version)
    cleaned = validate_ledger_event(ledger, data)
    _check_room(ledger)
    event = LedgerEvent.objects.create(ledger=ledger, data=cleaned)
    _bump(ledger)
    record(actor, "add_event", event, packet=ledger.packet, details={"side": ledger.side, "version": ledger.version})
    return event


def _get_event(ledger: Ledger, event_uid) -> LedgerEvent:
    try:
        return ledger.events.get(uid=uuid.UUID(str(event_uid)))
    except (LedgerEvent.DoesNotExist, ValueError):
        raise InvalidInput("no such event in this ledger", field="event") from None


@in_callers_transaction
def do_update_event(ledger: Ledger, event_uid, data, *, actor, expected_version) -> LedgerEvent:
    _check_writable(ledger, expected_version)
    event = _get_event(ledger, event_uid)
    event.data = validate_ledger_event(ledger, data)
    event.save(update_fields=["data", "updated_at"])
    _bump(ledger)
    record(actor, "update_event", event, packet=ledger.packet, details={"side": ledger.side, "version": ledger.version})
    return event


@in_callers_transaction
def do_delete_event(ledger: Ledger, event_uid, *, actor, expected_version) -> None:
    _check_writable(ledger, expected_version)
    event = _get_event(ledger, event_uid)
    record(actor, "delete_event", event, packet=ledger.packet, details={"side": ledger.side, "data": event.data})
    event.delete()
    _bump(ledger)


@transaction.atomic
def do_freeze_ledger(ledger: Ledger, *, actor, attestation: str, expected_version) -> Ledger:
    """Freeze with a written attestation; store canonical JSON + SHA-256. Irreversible.

    Writes the ledger and its audit entry only. When this is the second freeze, the
    agreement report is queued (``annotator.actions.derived``) and computed after commit;
    it can neither delay nor undo the freeze."""
    _check_writable(ledger, expected_version)
    attestation = (attestation or "").strip()
    if len(attestation) < MIN_ATTESTATION_CHARS:
        raise InvalidInput(
            f"an attestation of at least {MIN_ATTESTATION_CHARS} characters is required", field="attestation"
        )
    text, digest = canonical_sha256(ledger_document(ledger))
    ledger.canonical_json = text
    ledger.sha256 = digest
    ledger.attestation = attestation
    ledger.frozen_at = timezone.now()
    ledger.version += 1
    ledger.save()
    rows = ledger.events.order_by("created_at", "id")  # as every read orders them
    record(
        actor,
        "freeze_ledger",
        ledger,
        packet=ledger.packet,
        hashes={"ledger": digest, "row": row_seal(ledger), "events": events_seal(rows)},
        details={"side": ledger.side},
    )
    # The agreement report is derived work: computed by a task once this has committed.
    queue_agreement_report(ledger.packet, actor=actor, after="freeze")
    anchor_on_commit(f"freeze ledger {ledger.pk}")
    return ledger
