"""Plain-dict views of the domain objects, shaped by the viewer's role.

Nothing here decides *whether* a user may see an object (``annotator.access`` does);
it decides *what* of it each role is shown. An annotator's packet view says nothing
about the other ledger or the other annotator.
"""

from __future__ import annotations

from django.urls import reverse

from annotator.access import PacketAccess, both_frozen
from annotator.integrity import frozen_document, frozen_events
from annotator.models import GroundTruthVersion, Ledger, LedgerEvent, Packet, TaskKind, UnionItem


def task_kind_view(kind: TaskKind) -> dict:
    return {
        "slug": kind.slug,
        "name": kind.name,
        "description": kind.description,
        "scorer_id": kind.scorer_id,
        "schema": kind.schema,
        "builtin": kind.builtin,
    }


def video_summary(packet: Packet) -> dict:
    video = packet.video
    return {
        "id": video.pk,
        "title": video.title,
        "status": video.status,
        "frame_rate": [video.frame_rate_num, video.frame_rate_den],
        "frame_count": video.frame_count,
        "duration": video.duration,
        "width": video.width,
        "height": video.height,
        "sha256": video.sha256,
    }


def ledger_summary(ledger: Ledger) -> dict:
    return {
        "side": ledger.side,
        "version": ledger.version,
        "frozen": ledger.is_frozen,
        "frozen_at": ledger.frozen_at.isoformat() if ledger.frozen_at else None,
        "sha256": ledger.sha256 or None,
        "events": ledger.events.count(),
    }


def packet_view(access: PacketAccess) -> dict:
    packet = access.packet
    view = {
        "id": packet.pk,
        "title": packet.title,
        "instructions": packet.instructions,
        "params": packet.params,
        "sha256": packet.sha256,
        "created_at": packet.created_at.isoformat(),
        "task_kind": task_kind_view(packet.task_kind),
        "video": video_summary(packet),
        "your_role": access.role,
    }
    ledgers = {ledger.side: ledger for ledger in packet.ledgers.all()}
    if access.is_annotator:
        view["ledger"] = ledger_summary(ledgers[access.side])
        return view
    frozen = both_frozen(packet)
    if access.sees_progress:
        view["assignment"] = {
            "annotator_a": packet.annotator_a.username,
            "annotator_b": packet.annotator_b.username,
            "adjudicator": packet.adjudicator.username,
        }
        view["ledgers"] = {side: ledger_summary(ledger) for side, ledger in ledgers.items()}
    else:
        view["ledgers"] = {side: {"side": side, "frozen": ledger.is_frozen} for side, ledger in ledgers.items()}
    view["union_ready"] = frozen
    union = getattr(packet, "union", None) if frozen else None
    if union is not None:
        items = union.items.all()
        view["union"] = {
            "items": items.count(),
            "to_decide": items.exclude(status=UnionItem.Status.AGREED).count(),
            "decided": items.exclude(status=UnionItem.Status.AGREED).filter(decision__isnull=False).count(),
        }
    return view


def event_view(event: LedgerEvent) -> dict:
    return {"uid": str(event.uid), "data": event.data}


def own_ledger_view(ledger: Ledger) -> dict:
    return {**ledger_summary(ledger), "events": [event_view(e) for e in ledger.events.all()]}


def frozen_ledger_view(ledger: Ledger) -> dict:
    frozen_document(ledger)  # the stored text is served only once it matches its SHA-256
    return {
        **ledger_summary(ledger),
        "attestation": ledger.attestation,
        "canonical_json": ledger.canonical_json,
    }


def union_item_view(item: UnionItem) -> dict:
    decision = getattr(item, "decision", None)
    return {
        "position": item.position,
        "status": item.status,
        "a_value": item.a_value,
        "b_value": item.b_value,
        "differing_fields": item.differing_fields,
        "boundary_deltas": item.boundary_deltas,
        "decision": None
        if decision is None
        else {
            "action": decision.action,
            "final_value": decision.final_value,
            "rationale": decision.rationale,
            "decided_by": decision.decided_by.username,
            "decided_at": decision.decided_at.isoformat(),
        },
    }


def version_view(version: GroundTruthVersion, *, include_events: bool = False) -> dict:
    events = frozen_events(version)  # content and manifest verified before anything is shown
    view = {
        "id": version.pk,
        "packet": version.packet_id,
        "tier": version.tier,
        "number": version.number,
        "sha256": version.sha256,
        "source": version.source,
        "manifest": version.manifest,
        "changelog": version.changelog,
        "created_at": version.created_at.isoformat(),
        "export_url": reverse("api-version-export", args=[version.pk]),
    }
    if include_events:
        view["events"] = events
    return view
