"""Reads across packets for maintainers: the dashboard rows and the audit view.

Never writes. Rows are built only from packets the caller maintains
(``access.maintained_packets``): event counts of both sides are progress, which the
maintainer role sees at any time (``PacketAccess.sees_progress``), never contents.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q, QuerySet

from annotator import access
from annotator.models import AuditEntry, GroundTruthVersion, Ledger, Union

STATES = ["assigned", "in progress", "frozen", "adjudicating", "published"]


@dataclass(frozen=True)
class SideProgress:
    username: str
    events: int
    frozen: bool


@dataclass(frozen=True)
class DashboardRow:
    packet_id: int
    title: str
    project: str
    task_kind: str
    state: str
    a: SideProgress
    b: SideProgress
    adjudicator: str
    both_frozen: bool
    published_version_id: int | None


def packet_state(sides: list[SideProgress], has_union: bool, published: bool) -> str:
    """assigned (nothing written) → in progress → frozen (both) → adjudicating (union
    built) → published (an adjudicated version exists)."""
    if published:
        return "published"
    if all(s.frozen for s in sides):
        return "adjudicating" if has_union else "frozen"
    if any(s.frozen or s.events for s in sides):
        return "in progress"
    return "assigned"


def dashboard_rows(user, *, project_id=None, state=None, person_id=None) -> list[DashboardRow]:
    packets = access.maintained_packets(user).select_related("annotator_a", "annotator_b", "adjudicator")
    if project_id:
        packets = packets.filter(project_id=project_id)
    if person_id:
        on_it = Q(annotator_a_id=person_id) | Q(annotator_b_id=person_id) | Q(adjudicator_id=person_id)
        packets = packets.filter(on_it)
    packets = list(packets.order_by("-created_at")[:500])
    ids = [p.pk for p in packets]
    ledgers = {
        (row.packet_id, row.side): row
        for row in Ledger.objects.filter(packet_id__in=ids).annotate(n=Count("events")).select_related("annotator")
    }
    unions = set(Union.objects.filter(packet_id__in=ids).values_list("packet_id", flat=True))
    published = dict(
        GroundTruthVersion.objects.filter(packet_id__in=ids, tier=GroundTruthVersion.Tier.ADJUDICATED)
        .order_by("packet_id", "created_at")
        .values_list("packet_id", "pk")
    )
    rows = []
    for packet in packets:
        pair = [ledgers[packet.pk, side] for side in "AB"]
        sides = [SideProgress(ledger.annotator.username, ledger.n, ledger.is_frozen) for ledger in pair]
        row_state = packet_state(sides, packet.pk in unions, packet.pk in published)
        if state and row_state != state:
            continue
        rows.append(
            DashboardRow(
                packet_id=packet.pk,
                title=packet.title,
                project=packet.project.title if packet.project else "",
                task_kind=packet.task_kind.name,
                state=row_state,
                a=sides[0],
                b=sides[1],
                adjudicator=packet.adjudicator.username,
                both_frozen=all(s.frozen for s in sides),
                published_version_id=published.get(packet.pk),
            )
        )
    return rows


def audit_entries(
    user,
    *,
    person_id=None,
    operation: str | None = None,
    packet_id=None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 500,
) -> QuerySet[AuditEntry]:
    """The audit view across packets, newest first, filtered."""
    entries = access.visible_audit_entries(user)
    if person_id:
        entries = entries.filter(actor_id=person_id)
    if operation:
        entries = entries.filter(operation=operation)
    if packet_id:
        entries = entries.filter(packet_id=packet_id)
    if since:
        entries = entries.filter(at__gte=since)
    if until:
        entries = entries.filter(at__lt=until)
    return entries.order_by("-at", "-id")[:limit]


def audit_operations(user) -> list[str]:
    return sorted(set(access.visible_audit_entries(user).values_list("operation", flat=True)))


def attestations(entries) -> dict[int, str]:
    """Audit entry id -> the attestation text of the ledger its ``freeze_ledger`` froze
    (the text is not in the entry; the frozen ledger holds it, under its hash)."""
    freezes = {e.pk: int(e.object_id) for e in entries if e.operation == "freeze_ledger" and e.object_id.isdigit()}
    texts = dict(Ledger.objects.filter(pk__in=freezes.values()).values_list("pk", "attestation"))
    return {entry_id: texts[ledger_id] for entry_id, ledger_id in freezes.items() if ledger_id in texts}


def shown_details(entry: AuditEntry, *, contents: bool = False) -> dict:
    """An entry's details for the audit view: a deleted event's contents are left out
    (the maintainer role sees progress, not contents, before both ledgers freeze) unless
    ``contents`` (``access.sees_ledger_contents``)."""
    return dict(entry.details) if contents else {k: v for k, v in entry.details.items() if k != "data"}
