"""Read-only documents built from frozen rows: what a ledger's or a version's SHA-256
covers, and their events in the scorer's shapes. Reads rows, writes nothing.

Readers (export, grading reads, the REST views) import these from here, never from
``annotator.actions``: the write layer may use them, they never use the write layer.
"""

from __future__ import annotations

from annotator.models import GroundTruthVersion, Ledger, Packet
from annotator.models.taskkind_schema import export_event, sort_events
from annotator.reads.integrity import frozen_events


def version_document(packet: Packet, events: list[dict]) -> dict:
    """What a version's SHA-256 covers: the events in export order, full fields."""
    schema = packet.task_kind.schema
    return {"task_kind": packet.task_kind.slug, "events": sort_events(schema, events)}


def version_events(version: GroundTruthVersion) -> list[dict]:
    """The version's events, verified against its SHA-256 (``TamperedData`` otherwise)."""
    return frozen_events(version)


def version_submission(version: GroundTruthVersion) -> dict:
    """The version's events in the scorer's ground-truth shape (``{"actions": [...]}``)."""
    schema = version.packet.task_kind.schema
    return {schema["root_key"]: [export_event(schema, e) for e in version_events(version)]}


def ledger_document(ledger: Ledger) -> dict:
    """The frozen form of a ledger: what its SHA-256 covers."""
    schema = ledger.packet.task_kind.schema
    events = sort_events(schema, [e.data for e in ledger.events.all()])
    return {
        "packet_sha256": ledger.packet.sha256,
        "side": ledger.side,
        "task_kind": ledger.packet.task_kind.slug,
        "scorer_id": ledger.packet.task_kind.scorer_id,
        "events": events,
    }


def ledger_submission(ledger_events: list[dict], schema: dict) -> dict:
    """A ledger's events in the scorer's submission shape (``{"actions": [...]}``)."""
    return {schema["root_key"]: [export_event(schema, e) for e in sort_events(schema, ledger_events)]}
