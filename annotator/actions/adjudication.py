"""The adjudicator's decisions on union items."""

from __future__ import annotations

from django.db import transaction

from annotator.actions.ledgers import validate_ledger_event
from annotator.base.errors import InvalidInput, StaleVersion
from annotator.base.seals import row_seal
from annotator.models import Decision, Ledger, UnionItem
from annotator.models.audit_log import record
from annotator.reads import realtime

MIN_RATIONALE_CHARS = 3
UNCHECKED = object()


def validate_decision(item: UnionItem, *, action: str, final_value, rationale: str):
    """Validate a decision; return the final value it implies."""
    if action not in Decision.Action.values:
        raise InvalidInput(f"action must be one of {', '.join(Decision.Action.values)}", field="action")
    if len((rationale or "").strip()) < MIN_RATIONALE_CHARS:
        raise InvalidInput("a rationale is required for every decision", field="rationale")
    if action == Decision.Action.TAKE_A:
        if item.a_value is None:
            raise InvalidInput("annotator A has no event in this item", field="action")
        return item.a_value
    if action == Decision.Action.TAKE_B:
        if item.b_value is None:
            raise InvalidInput("annotator B has no event in this item", field="action")
        return item.b_value
    if action == Decision.Action.EDIT:
        ledger = Ledger.objects.select_related("packet__task_kind", "packet__video").get(
            packet=item.union.packet, side="A"
        )
        return validate_ledger_event(ledger, final_value)
    return None  # drop, unknown: no event in the ground truth


@transaction.atomic
def do_decide_item(
    item: UnionItem, *, actor, action: str, final_value=None, rationale: str, replaces=UNCHECKED
) -> Decision:
    """Record (or revise) the decision on one union item.

    ``unknown`` means the video cannot settle the item: it is left out of the scored
    events and listed with both values under ``unresolved`` in the version manifest.
    Agreed items need no decision but may be overridden (e.g. both annotators wrong).
    Decisions stay revisable after a publication; publishing again makes a new version.
    ``replaces``: the decision the caller saw (its ``decided_at`` in ISO form, None for no
    decision). When another decision was recorded since (a second adjudicator tab), nothing
    is changed and StaleVersion says who decided what; the caller shows both and chooses.
    Precondition: caller holds ``select_for_update`` on the packet.
    """
    if replaces is not UNCHECKED:
        current = Decision.objects.filter(item=item).select_related("decided_by").first()
        seen = current.decided_at.isoformat() if current else None
        if seen != replaces:
            if current is None:
                raise StaleVersion("the decision this page showed on this item was withdrawn meanwhile")
            raise StaleVersion(
                f"{current.decided_by.username} decided this item meanwhile ({current.action.replace('_', ' ')})"
            )
    value = validate_decision(item, action=action, final_value=final_value, rationale=rationale)
    decision, _ = Decision.objects.update_or_create(
        item=item,
        defaults={"action": action, "final_value": value, "rationale": rationale.strip(), "decided_by": actor},
    )
    record(
        actor,
        "decide_item",
        decision,
        packet=item.union.packet,
        hashes={"row": row_seal(decision)},
        details={
            "position": item.position,
            "status": item.status,
            "action": action,
            "a_value": item.a_value,
            "b_value": item.b_value,
            "final_value": value,
            "rationale": rationale.strip(),
        },
    )
    transaction.on_commit(lambda: realtime.broadcast_union_item(item.union.packet_id, item.position))
    return decision
