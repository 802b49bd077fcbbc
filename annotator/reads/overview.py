"""Reads across packets for maintainers: the dashboard rows and the audit view.

Never writes. Rows are built only from packets the caller maintains
(``access.maintained_packets``): event counts of both sides are progress, which the
maintainer role sees at any time (``PacketAccess.sees_progress``), never contents.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, CharField, Count, Exists, OuterRef, Q, QuerySet, Value, When

from annotator.base import signing
from annotator.models import AuditEntry, GroundTruthVersion, Ledger, LedgerEvent, Packet, Union
from annotator.reads import access
from annotator.reads.integrity import ledgers_by_side

AUDIT_WINDOW = 100
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
    next_step: NextStep | None = None


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


@dataclass(frozen=True)
class NextStep:
    """What the packet waits for, and who holds it (a username, or a role when the
    caller may not see who is assigned); ``who`` is empty when nothing is left."""

    text: str
    who: str

    def as_dict(self) -> dict:
        return {"text": self.text, "who": self.who}


def next_step(
    *,
    a: tuple[str, bool],
    b: tuple[str, bool],
    adjudicator: str,
    has_union: bool,
    to_decide: int = 0,
    decided: int = 0,
    published: str | None = None,
) -> NextStep:
    """The one next step of the protocol: ``a`` / ``b`` are (who, frozen) per side."""
    open_sides = [name for name, frozen in (a, b) if not frozen]
    if open_sides:
        return NextStep(
            f"{' and '.join(open_sides)}: label and freeze {'their ledgers' if len(open_sides) > 1 else 'the ledger'}",
            " and ".join(open_sides),
        )
    if not has_union:
        return NextStep(f"{adjudicator}: open the adjudication page (it builds the union)", adjudicator)
    if decided < to_decide:
        return NextStep(f"{adjudicator}: decide {to_decide - decided} of {to_decide} item(s)", adjudicator)
    if published is None:
        return NextStep(f"{adjudicator}: publish the ground truth (only the adjudicator can)", adjudicator)
    return NextStep(f"nothing: {published} is published (the adjudicator publishes again after a changed decision)", "")


DASHBOARD_WINDOW = 100


@dataclass(frozen=True)
class Dashboard:
    """One window of the dashboard's rows, and what the database counts over all rows."""

    rows: list[DashboardRow]
    counts: dict[str, int]  # per state, over every packet the filters (but the state) select
    total: int  # rows the filters (state included) select
    page: int
    pages: int
    window: int

    @property
    def windowed(self) -> bool:
        return self.pages > 1


def with_state(packets: QuerySet[Packet]) -> QuerySet[Packet]:
    """``packets`` annotated with ``state`` (``packet_state``, computed by the database)."""
    here = OuterRef("pk")
    open_side = Ledger.objects.filter(packet=here, frozen_at__isnull=True)
    return packets.annotate(
        state=Case(
            When(Exists(GroundTruthVersion.objects.filter(packet=here, tier=GroundTruthVersion.Tier.ADJUDICATED)),
                 then=Value("published")),
            When(~Exists(open_side) & Exists(Union.objects.filter(packet=here)), then=Value("adjudicating")),
            When(~Exists(open_side), then=Value("frozen")),
            When(
                Exists(Ledger.objects.filter(packet=here, frozen_at__isnull=False))
                | Exists(LedgerEvent.objects.filter(ledger__packet=here)),
                then=Value("in progress"),
            ),
            default=Value("assigned"),
            output_field=CharField(),
        )
    )  # fmt: skip


def dashboard(
    user, *, project_id=None, state=None, person_id=None, page: int = 1, window: int | None = None
) -> Dashboard:
    """The packets ``user`` maintains, newest first, ``window`` rows at a time; the state
    counts and the state filter are the database's, over every row."""
    window = window or DASHBOARD_WINDOW
    packets = access.maintained_packets(user).select_related("adjudicator")
    if project_id:
        packets = packets.filter(project_id=project_id)
    if person_id:
        on_it = Q(annotator_a_id=person_id) | Q(annotator_b_id=person_id) | Q(adjudicator_id=person_id)
        packets = packets.filter(on_it)
    packets = with_state(packets)
    found = dict(packets.order_by().values_list("state").annotate(n=Count("pk")).values_list("state", "n"))
    counts = {name: found.get(name, 0) for name in STATES}
    if state:
        packets = packets.filter(state=state)
    total = counts[state] if state else sum(counts.values())
    pages = max(1, -(-total // window))
    page = min(max(1, page), pages)
    chosen = packets.order_by("-created_at", "-pk")[(page - 1) * window : page * window]
    return Dashboard(dashboard_rows_of(list(chosen)), counts, total, page, pages, window)


def dashboard_rows(user, *, project_id=None, state=None, person_id=None) -> list[DashboardRow]:
    """The first window of ``dashboard``'s rows."""
    return dashboard(user, project_id=project_id, state=state, person_id=person_id).rows


def dashboard_rows_of(packets: list[Packet]) -> list[DashboardRow]:
    """Rows for these packets: a fixed number of queries, whatever their number."""
    ids = [p.pk for p in packets]
    by_packet: dict[int, list[Ledger]] = {pk: [] for pk in ids}
    for row in Ledger.objects.filter(packet_id__in=ids).annotate(n=Count("events")).select_related("annotator"):
        by_packet[row.packet_id].append(row)
    counts = Count("items", filter=~Q(items__status="agreed"))
    decided = Count("items", filter=~Q(items__status="agreed") & Q(items__decision__isnull=False))
    union_counts = {
        row["packet_id"]: (row["to_decide"], row["decided"])
        for row in Union.objects.filter(packet_id__in=ids)
        .values("packet_id")
        .annotate(to_decide=counts, decided=decided)
    }
    unions = set(union_counts)
    published = dict(
        GroundTruthVersion.objects.filter(packet_id__in=ids, tier=GroundTruthVersion.Tier.ADJUDICATED)
        .order_by("packet_id", "created_at")
        .values_list("packet_id", "pk")
    )
    rows = []
    for packet in packets:
        sides_of = ledgers_by_side(packet, by_packet[packet.pk])
        pair = [sides_of[side] for side in "AB"]
        sides = [SideProgress(ledger.annotator.username, ledger.n, ledger.is_frozen) for ledger in pair]
        row_state = packet_state(sides, packet.pk in unions, packet.pk in published)
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
                next_step=next_step(
                    a=(sides[0].username, sides[0].frozen),
                    b=(sides[1].username, sides[1].frozen),
                    adjudicator=packet.adjudicator.username,
                    has_union=packet.pk in unions,
                    to_decide=union_counts.get(packet.pk, (0, 0))[0],
                    decided=union_counts.get(packet.pk, (0, 0))[1],
                    published="a version" if packet.pk in published else None,
                ),
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
    offset: int = 0,
) -> QuerySet[AuditEntry]:
    """The audit view across packets, newest first, filtered: ``limit`` entries from the
    ``offset``-th."""
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
    packet_columns = [f"packet__{f.name}" for f in Packet._meta.concrete_fields if f.name not in ("id", "title")]
    entries = entries.select_related("actor", "packet").defer(*packet_columns)  # a packet is shown by its title
    return entries.order_by("-at", "-id")[offset : offset + limit]


def audit_operations(user) -> list[str]:
    return list(access.visible_audit_entries(user).order_by("operation").values_list("operation", flat=True).distinct())


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


def signing_key() -> dict | None:
    """The key the audit log is signed with now, and every public key trusted for older
    entries (shown to maintainers; None before the first entry made one)."""
    try:
        current = signing.current_key_id()
    except signing.NoSigningKey:
        return None
    others = {kid: signing.public_text(key) for kid, key in signing.keyring().keys.items() if kid != current}
    return {"key_id": current, "public_key": signing.current_public_text(), "older": dict(sorted(others.items()))}
