"""Building the union of two frozen ledgers with the scorer's own alignment."""

from __future__ import annotations

import dataclasses
import json

from django.db import transaction

from annotator.base.errors import Conflict
from annotator.base.families import adapter_for
from annotator.base.seals import union_block_seals, union_blocks_seal
from annotator.models import Ledger, Packet, Union, UnionItem
from annotator.models.audit_log import record
from annotator.models.taskkind_schema import export_event
from annotator.reads.integrity import frozen_events
from scoring import CapExceeded, get_scorer


def _as_dict(item) -> dict:
    return dataclasses.asdict(item) if dataclasses.is_dataclass(item) else dict(item)


def align_union(schema: dict, scorer_id: str, a_events: list[dict], b_events: list[dict]) -> list[dict]:
    """Pure: union items for two event lists (already in export order).

    Returns dicts with ``status``, ``a_index``, ``b_index``, ``differing_fields`` and
    ``boundary_deltas``; indices refer to the given lists.
    """
    a_scored = [export_event(schema, e) for e in a_events]
    b_scored = [export_event(schema, e) for e in b_events]
    adapter = adapter_for(schema["family"])
    items = adapter.union(a_scored, b_scored, schema=schema, scorer=get_scorer(scorer_id))
    result = []
    for raw in items:
        item = _as_dict(raw)
        a_index, b_index = item.get("a_index"), item.get("b_index")
        differing = list(item.get("differing_fields") or [])
        # Fields the scorer does not read (e.g. where a tennis point sits in the video)
        # can still differ; the adjudicator must see that too.
        if a_index is not None and b_index is not None:
            for name in sorted(set(a_events[a_index]) | set(b_events[b_index])):
                if a_events[a_index].get(name) != b_events[b_index].get(name) and name not in differing:
                    differing.append(name)
        status = item["status"]
        if status == "agreed" and differing:
            status = "conflicting"
        deltas = {}
        boundaries = schema.get("boundary_fields") or []
        if a_index is not None and b_index is not None and boundaries:
            for name in boundaries:
                a_value, b_value = a_events[a_index].get(name), b_events[b_index].get(name)
                if isinstance(a_value, int) and isinstance(b_value, int):
                    deltas[name] = b_value - a_value
        result.append(
            {
                "status": status,
                "a_index": a_index,
                "b_index": b_index,
                "differing_fields": differing,
                "boundary_deltas": deltas,
            }
        )
    return sorted(result, key=lambda it: _position_key(schema, it, a_events, b_events))


def _position_key(schema: dict, item: dict, a_events: list[dict], b_events: list[dict]) -> tuple:
    event = a_events[item["a_index"]] if item["a_index"] is not None else b_events[item["b_index"]]
    start = event.get((schema.get("boundary_fields") or [None])[0]) if schema.get("boundary_fields") else None
    return (start if isinstance(start, int) else -1, json.dumps(event, sort_keys=True))


@transaction.atomic
def do_build_union(packet: Packet, *, actor) -> Union:
    """Align both frozen ledgers and store the union items. Idempotent.

    Precondition: caller holds ``select_for_update`` on the packet.
    """
    existing = Union.objects.filter(packet=packet).first()
    if existing is not None:
        return existing
    ledgers = {ledger.side: ledger for ledger in Ledger.objects.filter(packet=packet)}
    if not all(ledgers[side].is_frozen for side in ("A", "B")):
        raise Conflict("the union needs both ledgers frozen")
    schema = packet.task_kind.schema
    a_events = frozen_events(ledgers["A"])
    b_events = frozen_events(ledgers["B"])
    try:
        items = align_union(schema, packet.task_kind.scorer_id, a_events, b_events)
    except CapExceeded as error:  # a ledger frozen before its family's cap was lowered
        raise Conflict(f"the union cannot be built: {error}") from None
    union = Union.objects.create(
        packet=packet,
        ledger_a_sha256=ledgers["A"].sha256,
        ledger_b_sha256=ledgers["B"].sha256,
        scorer_id=packet.task_kind.scorer_id,
    )
    UnionItem.objects.bulk_create(
        UnionItem(
            union=union,
            position=position,
            status=item["status"],
            a_index=item["a_index"],
            b_index=item["b_index"],
            a_value=a_events[item["a_index"]] if item["a_index"] is not None else None,
            b_value=b_events[item["b_index"]] if item["b_index"] is not None else None,
            differing_fields=item["differing_fields"],
            boundary_deltas=item["boundary_deltas"],
        )
        for position, item in enumerate(items)
    )
    counts = {status: sum(1 for it in items if it["status"] == status) for status in UnionItem.Status.values}
    # Sealed as stored (read back: ids and JSON as the database gives them).
    stored = Union.objects.get(pk=union.pk)
    blocks = union_block_seals(UnionItem.objects.filter(union=stored).iterator(chunk_size=1000))
    record(
        actor,
        "build_union",
        union,
        packet=packet,
        hashes={
            "ledger_a": union.ledger_a_sha256,
            "ledger_b": union.ledger_b_sha256,
            "row": union_blocks_seal(stored, blocks, len(items)),
            "count": len(items),
            "blocks": blocks,
        },
        details={"counts": counts},
    )
    return union
