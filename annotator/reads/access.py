"""The only way code obtains a packet, a ledger, a union, a ground-truth version or
anything graded against one (submissions, scoring runs, scores, jobs, leaderboards).

Every function takes the requesting user and raises ``NotFound`` when the user may not
see the object: an outsider, or an annotator asking for anything about the other
ledger, gets exactly the answer a non-existent object would get. Blindness lives here,
and every decision about a packet's material is made by the person's role *on that
packet* (:func:`role_on_packet`), never by "is this person a maintainer somewhere?".

Roles on a packet, from most to least restrictive:
- ``annotator`` (A or B): own ledger only. A person assigned as annotator gets this
  role on that packet whatever other roles they hold, until the packet is released
  (an adjudicated version is published: both ledgers are frozen for good); from then
  on a maintainer who annotated it is treated as a maintainer on it.
- ``adjudicator``: both ledgers and the union, only once both ledgers are frozen. A
  maintainer who adjudicates a packet stays its adjudicator (decisions stay revisable
  after a publication), so never sees its provisional tier or its grading material.
- ``maintainer`` (member of the ``maintainers`` group, or a superuser, holding no other
  role on the packet): progress of both ledgers at any time (status and counts only);
  contents once both are frozen; every ground-truth tier; grading material; the audit log.

Maintainer-wide material that belongs to no packet (the user list, people, projects,
videos, ingest jobs) goes by group membership alone (:func:`require_maintainer`);
anything across packets (the dashboard, the audit view) lists only the packets on
which the person's role is ``maintainer`` (:func:`maintained_packets`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from annotator.base.seals import UNION_BLOCK
from annotator.base.urlconverters import parse_id
from annotator.models import (
    ApiToken,
    AuditEntry,
    GroundTruthVersion,
    Job,
    Ledger,
    Packet,
    Project,
    ResumableUpload,
    ScoringRun,
    Submission,
    SubmissionScore,
    Union,
    UnionItem,
    Video,
)
from annotator.reads import separation
from annotator.reads.integrity import ledgers_by_side, verified_access_columns, verified_packet, verify_ledger_states
from annotator.reads.sealed_rows import (
    verify_runs,
    verify_scores,
    verify_submissions,
    verify_union,
    verify_union_item,
    verify_union_range,
)
from annotator.reads.separation import is_released, released_packet_id

__all__ = ["is_released", "released_packet_id"]  # decided in ``separation``, asked here

MAINTAINERS_GROUP = "maintainers"


class NotFound(Exception):
    """The object does not exist *or* the user may not know that it exists."""


class Forbidden(Exception):
    """The user can see the object but may not perform this operation on it."""


@dataclass(frozen=True)
class PacketAccess:
    packet: Packet
    role: str  # "annotator_a" | "annotator_b" | "adjudicator" | "maintainer"

    @property
    def side(self) -> str | None:
        return {"annotator_a": "A", "annotator_b": "B"}.get(self.role)

    @property
    def is_annotator(self) -> bool:
        return self.side is not None

    @property
    def sees_progress(self) -> bool:
        """Who is assigned, and both ledgers' status and event counts at any time."""
        return self.role == "maintainer"


# Roles told about everyone on the packet (presence, live union changes); an annotator
# is told only about their own tabs (``annotator.reads.realtime``).
STAFF_ROLES = frozenset({"adjudicator", "maintainer"})


def sees_everyone_present(role: str) -> bool:
    return role in STAFF_ROLES


def is_maintainer(user: AbstractBaseUser) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or user.groups.filter(name=MAINTAINERS_GROUP).exists()


def assignment_refusal(annotator_a, annotator_b, adjudicator) -> str | None:
    """Why a packet cannot be assigned to these three people, or None: the one rule
    packet creation applies (``actions.packets.validate_assignment``) and dry runs
    predict with (``label_imports.preview_moment_rows``)."""
    people = [annotator_a, annotator_b, adjudicator]
    if any(person is None for person in people):
        return "annotator A, annotator B and the adjudicator are all required"
    if len({person.pk for person in people}) != 3:
        return "annotator A, annotator B and the adjudicator must be three different people"
    if not all(person.is_active for person in people):
        return "every assigned person must be an active user"
    return None


def require_maintainer(user: AbstractBaseUser) -> None:
    """Maintainer-only material: everyone else gets the answer a missing object gets."""
    if not is_maintainer(user):
        raise NotFound("maintainers only")


def role_on_packet(user: AbstractBaseUser, packet: Packet) -> str | None:
    """The one role a person has on a packet (see the module docstring), or ``None``;
    ``None`` too where someone blind on the packet may hold the account's password
    (:func:`fenced`)."""
    role = _assigned_role(user, packet)
    return None if role is None or fenced(user, packet, role) else role


def _assigned_role(user: AbstractBaseUser, packet: Packet, *, maintainer: bool | None = None) -> str | None:
    """``maintainer``: ``is_maintainer(user)`` when the caller read it already."""
    if not user.is_authenticated or not user.is_active:
        return None
    maintainer = is_maintainer(user) if maintainer is None else maintainer
    side = {packet.annotator_a_id: "annotator_a", packet.annotator_b_id: "annotator_b"}.get(user.pk)
    if side is not None:
        return "maintainer" if maintainer and is_released(packet) else side
    if packet.adjudicator_id == user.pk:
        return "adjudicator"
    if maintainer:
        return "maintainer"
    return None


def packet_accesses(user: AbstractBaseUser, packets) -> list[PacketAccess]:
    """``role_on_packet`` for a list of packets, with the queries it needs read once (the
    maintainer group, the fenced packets); the packets with no role are left out. Only a
    maintainer's own annotated packets cost a query each (whether they are released)."""
    maintainer = is_maintainer(user)
    fenced_ids = fenced_packet_ids(user)
    found = []
    for packet in packets:
        role = None if packet.pk in fenced_ids else _assigned_role(user, packet, maintainer=maintainer)
        if role is not None:
            found.append(PacketAccess(packet, role))
    return found


def fenced(user: AbstractBaseUser, packet: Packet, role: str) -> bool:
    """Separation of duties (``docs/workflow.md``): an account whose password a person blind
    on the packet chose (set it directly, or through accounts whose passwords they chose)
    gets nothing of the packet; one whose one-time link such a person issued (they may have
    used it) gets no maintainer's view of it."""
    return any(
        (strength == separation.CERTAIN or role == "maintainer") and separation.blind_on(packet, knower)
        for knower, strength in separation.credential_knowers(user.pk).items()
    )


def fenced_packet_ids(user: AbstractBaseUser) -> set[int]:
    """:func:`fenced` as a set of packet ids, for the lists."""
    knowers = separation.credential_knowers(user.pk)
    if not knowers:
        return set()
    candidates = Packet.objects.filter(pk__in=separation.blind_packet_ids(knowers))
    return {p.pk for p in candidates if (role := _assigned_role(user, p)) is not None and fenced(user, p, role)}


def administration_refusal(user: AbstractBaseUser) -> str | None:
    """Why the person may not administer accounts (invite, roles, passwords, links,
    activity) now, or ``None``: while they, or anyone who may hold their password, are
    blind on a packet, an account they make or change would see what that blindness hides."""
    if not is_maintainer(user):
        return "maintainers only"
    if separation.blind_packet_ids([user.pk]):
        return "you annotate or adjudicate a packet that is blind for you, so another maintainer administers accounts"
    if separation.blind_packet_ids(separation.credential_knowers(user.pk)):
        return (
            "someone who may hold your password (they set it or issued your one-time link) annotates or"
            " adjudicates a packet, so another maintainer administers accounts"
        )
    return None


def people_administrators() -> list:
    """The active maintainers who may administer accounts now (the people page names them)."""
    users = (
        get_user_model().objects.filter(is_active=True).filter(Q(is_superuser=True) | Q(groups__name=MAINTAINERS_GROUP))
    )
    return [u for u in users.distinct().order_by("username") if administration_refusal(u) is None]


def sees_sign_in_times(user: AbstractBaseUser) -> bool:
    """Other people's last sign-in on the people pages: not while the viewer is blind on a
    packet (when the other annotator last worked is their progress)."""
    return administration_refusal(user) is None


def visible_packets(user: AbstractBaseUser) -> QuerySet[Packet]:
    packets = Packet.objects.select_related("video", "task_kind")
    if not user.is_authenticated:
        return packets.none()
    if not is_maintainer(user):
        packets = packets.filter(Q(annotator_a=user) | Q(annotator_b=user) | Q(adjudicator=user))
    return packets.exclude(pk__in=fenced_packet_ids(user))


def maintained_packets(user: AbstractBaseUser) -> QuerySet[Packet]:
    """The packets on which ``user``'s role is ``maintainer`` (:func:`role_on_packet` as
    a query): none for a non-maintainer; for a maintainer, every packet but those they
    adjudicate and those they annotate that are not released yet. The dashboard and
    the audit view across packets show these only."""
    if not is_maintainer(user):
        return Packet.objects.none()
    annotated = Packet.objects.filter(Q(annotator_a=user) | Q(annotator_b=user)).values_list("pk", flat=True)
    blind = [pk for pk in annotated if not released_packet_id(pk)]
    packets = Packet.objects.select_related("video", "task_kind", "project")
    return packets.exclude(adjudicator=user).exclude(pk__in=blind).exclude(pk__in=fenced_packet_ids(user))


# Imports recorded once, on their task kind, for packets of many (``actions.moment_imports``).
KIND_IMPORT_OPERATIONS = ("import_moment_packets",)
TOKEN_OPERATIONS = ("issue_token", "revoke_token")


def visible_audit_entries(user: AbstractBaseUser) -> QuerySet[AuditEntry]:
    """The audit view across packets: entries about packets the user maintains, and
    entries about no packet (people, projects, videos, task kinds). Maintainers only."""
    require_maintainer(user)
    maintained = maintained_packets(user)
    entries = AuditEntry.objects.select_related("actor", "packet").filter(
        Q(packet__isnull=True) | Q(packet__in=maintained.values("pk"))
    )
    # Entries about a video (who asked for its full rendition, when) belong to no packet; on a
    # video of a packet the person annotates blind or adjudicates, they would show the other
    # people's activity. Their own stay.
    on_packets = Packet.objects.filter(
        Q(annotator_a=user) | Q(annotator_b=user) | Q(adjudicator=user) | Q(pk__in=fenced_packet_ids(user))
    )
    blind_videos = on_packets.exclude(pk__in=maintained.values("pk")).values_list("video_id", flat=True)
    hidden = [str(pk) for pk in blind_videos]
    if hidden:
        entries = entries.exclude(
            Q(packet__isnull=True, object_type=Video._meta.label, object_id__in=hidden) & ~Q(actor=user)
        )
    # A label import across packets is one entry about its task kind, with its counts
    # ("updated: 1"): on the kind of a packet the person annotates blind or adjudicates, it
    # would say that packet's provisional labels changed. Their own imports stay.
    blind_kinds = on_packets.exclude(pk__in=maintained.values("pk")).values_list("task_kind_id", flat=True)
    kinds = [str(pk) for pk in blind_kinds]
    if kinds:
        entries = entries.exclude(
            Q(packet__isnull=True, operation__in=KIND_IMPORT_OPERATIONS, object_id__in=kinds) & ~Q(actor=user)
        )
    if administration_refusal(user) is not None:  # when others ask for API tokens is their activity
        entries = entries.exclude(Q(operation__in=TOKEN_OPERATIONS) & ~Q(object_id=str(user.pk)))
    return entries


def access_person(user: AbstractBaseUser, person_id: int | str):
    """An account, for the people pages: maintainers only."""
    require_maintainer(user)
    try:
        return get_user_model().objects.get(pk=int(person_id))
    except (get_user_model().DoesNotExist, ValueError, TypeError):
        raise NotFound("person") from None


def visible_tokens(user: AbstractBaseUser, person=None) -> QuerySet[ApiToken]:
    """API tokens: one's own; another person's for a maintainer who may administer accounts
    (``administration_refusal``: a blind maintainer does not read when the other annotator
    last asked for one)."""
    if not user.is_authenticated or not user.is_active:
        raise NotFound("tokens")
    if person is not None and person.pk != user.pk and administration_refusal(user) is not None:
        raise NotFound("tokens")
    return ApiToken.objects.filter(user=person or user).select_related("user")


def access_token(user: AbstractBaseUser, token_id: int | str, *, for_update: bool = False) -> ApiToken:
    """One API token, to revoke it: the owner's, or any for a maintainer who may administer
    accounts; anyone else gets the missing answer."""
    if not user.is_authenticated or not user.is_active:
        raise NotFound("token")
    tokens = ApiToken.objects.select_related("user")
    if for_update:
        tokens = tokens.select_for_update(of=("self",))
    try:
        token = tokens.filter(pk=int(token_id)).first()
    except (ValueError, TypeError):
        token = None
    if token is None or (token.user_id != user.pk and administration_refusal(user) is not None):
        raise NotFound("token")
    return token


def access_project(user: AbstractBaseUser, project_id: int | str) -> Project:
    """A project (its settings and pools name people, not labels): maintainers only."""
    require_maintainer(user)
    try:
        return Project.objects.select_related("task_kind").get(pk=int(project_id))
    except (Project.DoesNotExist, ValueError, TypeError):
        raise NotFound("project") from None


def access_packet(user: AbstractBaseUser, packet_id: int | str, *, for_update: bool = False) -> PacketAccess:
    try:
        packets = Packet.objects.select_related("video", "task_kind")
        if for_update:
            # FOR NO KEY UPDATE: writers of one packet still wait for each other, but rows that
            # merely refer to it (an audit entry's packet, checked by its foreign key with
            # FOR KEY SHARE) are not held up: a scoring worker appending to the audit chain
            # while a run starts on the same packet would otherwise deadlock with it (the run
            # holding the packet and waiting for the chain's lock, the worker the reverse).
            packets = packets.select_for_update(no_key=True)
        packet = packets.get(pk=int(packet_id))
    except (Packet.DoesNotExist, ValueError, TypeError):
        raise NotFound("packet") from None
    role = role_on_packet(user, packet)
    if role is None:
        raise NotFound("packet")
    return PacketAccess(verified_packet(packet), role)


def access_video(user: AbstractBaseUser, video_id: int | str) -> Video:
    """Videos outside a packet are maintainers' material."""
    if not is_maintainer(user):
        raise NotFound("video")
    try:
        return Video.objects.get(pk=int(video_id))
    except (Video.DoesNotExist, ValueError, TypeError):
        raise NotFound("video") from None


def access_upload(user: AbstractBaseUser, key: str) -> ResumableUpload:
    """A resumable upload is its maintainer's own: anyone else gets the missing answer."""
    if not is_maintainer(user):
        raise NotFound("upload")
    upload = ResumableUpload.objects.filter(key=str(key)[:32], created_by=user).first()
    if upload is None:
        raise NotFound("upload")
    return upload


def both_frozen(packet: Packet) -> bool:
    """Both ledgers frozen, their frozen state read against the audit log: a ledger frozen
    or unfrozen by SQL answers the integrity error instead of opening the other side."""
    ledgers = verify_ledger_states(list(Ledger.objects.filter(packet=packet).defer("canonical_json")))
    return all(ledger.is_frozen for ledger in ledgers_by_side(packet, ledgers).values())


def access_own_ledger(user: AbstractBaseUser, packet_id: int | str, *, for_update: bool = False) -> Ledger:
    """The requesting annotator's own ledger on the packet.

    A ledger row exists only for the person assigned to that side, so one query answers
    both "is this user an annotator here?" and "which ledger?" (the annotator role wins
    over any other role the user holds). With ``for_update`` only the ledger row is
    locked, never the packet, video or task kind it joins: writers on different ledgers
    do not wait for each other.
    """
    if not user.is_authenticated or not user.is_active:
        raise NotFound("ledger")
    ledgers = Ledger.objects.select_related("packet", "packet__task_kind", "packet__video")
    if for_update:
        ledgers = ledgers.select_for_update(of=("self",))
    try:
        ledger = ledgers.get(packet_id=int(packet_id), annotator=user)
    except (Ledger.DoesNotExist, ValueError, TypeError):
        raise NotFound("ledger") from None
    if fenced(user, ledger.packet, f"annotator_{ledger.side.lower()}"):
        raise NotFound("ledger")
    if not ledger.is_frozen:  # unfrozen by SQL after its freeze: never writable again
        verify_ledger_states([ledger])
    verified_packet(ledger.packet)  # what the ledger's events mean
    return ledger


def access_ledger(user: AbstractBaseUser, packet_id: int | str, side: str) -> Ledger:
    """A ledger by side. Annotators reach only their own; others only after both freeze."""
    access = access_packet(user, packet_id)
    side = str(side).upper()
    if side not in {"A", "B"}:
        raise NotFound("ledger")
    if access.is_annotator:
        if side != access.side:
            raise NotFound("ledger")
    elif not both_frozen(access.packet):
        raise NotFound("ledger")
    return ledgers_by_side(access.packet, Ledger.objects.select_related("packet").filter(packet=access.packet))[side]


def _union_of(user: AbstractBaseUser, packet_id: int | str) -> tuple[PacketAccess, Union]:
    access = access_packet(user, packet_id)
    if access.role not in {"adjudicator", "maintainer"}:
        raise NotFound("union")
    try:
        return access, Union.objects.get(packet=access.packet)
    except Union.DoesNotExist:
        raise NotFound("union") from None


def access_union(user: AbstractBaseUser, packet_id: int | str) -> tuple[PacketAccess, Union]:
    access, union = _union_of(user, packet_id)
    verify_union(union)  # an item changed by SQL is never shown, decided on or published
    return access, union


UNION_PAGE_SIZE = 256
UNION_MAX_PAGE_SIZE = 1024


def access_union_page(
    user: AbstractBaseUser, packet_id: int | str, start: int, limit: int
) -> tuple[PacketAccess, Union, int, list[UnionItem]]:
    """``access_union`` and the items in positions ``start`` up to ``start + limit`` (with
    their decisions), read once, with the item count: the union row and every block of items
    the page touches are verified through their seals (``sealed_rows.verify_union_range``),
    so a page costs the same whatever the union's size, and the rows verified are the rows
    shown. Publishing and ``verify_integrity`` still verify every block."""
    access, union = _union_of(user, packet_id)
    first, stop = start - start % UNION_BLOCK, -(-(start + limit) // UNION_BLOCK) * UNION_BLOCK
    rows = list(
        union.items.filter(position__gte=first, position__lt=stop)
        .select_related("decision", "decision__decided_by")
        .order_by("position")
    )
    count = verify_union_range(union, rows, first, stop)  # an item changed by SQL is never shown
    return access, union, count, [row for row in rows if start <= row.position < start + limit]


def access_union_item(user: AbstractBaseUser, packet_id: int | str, position) -> tuple[PacketAccess, UnionItem]:
    """One item of the union with the union row and the item's block verified through
    their seals (``sealed_rows.verify_union_item``): a decision's cost does not grow with
    the union. Publishing verifies every item (``reads.publishing``)."""
    access, union = _union_of(user, packet_id)
    item = UnionItem.objects.filter(union=union, position=position).first() if parse_id(position) is not None else None
    if item is None:
        raise NotFound("union item")
    item.union = union
    verify_union_item(union, item)
    return access, item


def visible_versions(user: AbstractBaseUser, access: PacketAccess) -> QuerySet[GroundTruthVersion]:
    """Maintainers see every tier; everyone else on the packet sees the adjudicated tier only."""
    versions = GroundTruthVersion.objects.filter(packet=access.packet)
    if access.role == "maintainer":
        return versions
    return versions.filter(tier=GroundTruthVersion.Tier.ADJUDICATED)


def access_version(user: AbstractBaseUser, version_id: int | str) -> tuple[PacketAccess, GroundTruthVersion]:
    try:
        version = GroundTruthVersion.objects.select_related("packet").get(pk=int(version_id))
    except (GroundTruthVersion.DoesNotExist, ValueError, TypeError):
        raise NotFound("version") from None
    access = access_packet(user, version.packet_id)
    if not visible_versions(user, access).filter(pk=version.pk).exists():
        raise NotFound("version")
    return access, verified_access_columns(version)


# ------------------------------------------------------------------ packet operations


def _packet_with_role(user, packet_id, roles: set[str], what: str, *, for_update: bool = False) -> PacketAccess:
    try:
        access = access_packet(user, packet_id, for_update=for_update)
    except NotFound:
        raise NotFound(what) from None
    if access.role not in roles:
        raise NotFound(what)
    return access


def access_union_build(user: AbstractBaseUser, packet_id: int | str, *, for_update: bool = False) -> PacketAccess:
    """Who may build the union: the adjudicator or a maintainer, once both ledgers are frozen."""
    access = _packet_with_role(user, packet_id, {"adjudicator", "maintainer"}, "union", for_update=for_update)
    if not both_frozen(access.packet):
        raise NotFound("union")
    return access


def access_adjudication(user: AbstractBaseUser, packet_id: int | str, *, for_update: bool = False) -> PacketAccess:
    """Deciding union items and publishing: the packet's adjudicator only."""
    return _packet_with_role(user, packet_id, {"adjudicator"}, "union", for_update=for_update)


def access_adjudication_view(user: AbstractBaseUser, packet_id: int | str) -> PacketAccess:
    """The adjudication page: the adjudicator, and maintainers following it read-only."""
    return _packet_with_role(user, packet_id, {"adjudicator", "maintainer"}, "adjudication")


def access_audit_log(user: AbstractBaseUser, packet_id: int | str) -> PacketAccess:
    return _packet_with_role(user, packet_id, {"maintainer"}, "audit log")


def sees_ledger_contents(access: PacketAccess) -> bool:
    """Whether the audit log may show ledger contents (a deleted event's data): a
    maintainer sees progress, not contents, until both ledgers are frozen."""
    return access.role in STAFF_ROLES and both_frozen(access.packet)


def access_agreement(user: AbstractBaseUser, packet_id: int | str, *, report: bool = True) -> PacketAccess:
    """The agreement report: maintainers and the adjudicator (who has seen both ledgers
    by then), once both are frozen; before that there is no report to find. With
    ``report=False``: the page that waits for it."""
    access = _packet_with_role(user, packet_id, {"adjudicator", "maintainer"}, "agreement")
    if report and not both_frozen(access.packet):
        raise NotFound("agreement")
    return access


# ----------------------------------------------------------------------------- grading
#
# Everything graded is graded against a ground-truth version, often the provisional
# tier: a score's diagnostics quote the reference events, a run names the exact
# ``gt.json`` hash. So every grading object is reached only by a person whose role on
# the object's packet is ``maintainer``.


def access_grading_packet(user: AbstractBaseUser, packet_id: int | str, *, for_update: bool = False) -> Packet:
    return _packet_with_role(user, packet_id, {"maintainer"}, "packet", for_update=for_update).packet


def access_grading_version(user: AbstractBaseUser, version_id: int | str) -> GroundTruthVersion:
    access, version = access_version(user, version_id)
    if access.role != "maintainer":
        raise NotFound("version")
    return version


def _graded_row(user, queryset, pk, packet_of, what: str):
    if not is_maintainer(user):  # cheap refusal before any lookup
        raise NotFound(what)
    try:
        row = queryset.filter(pk=int(pk)).first()
    except (ValueError, TypeError):
        row = None
    if row is None or role_on_packet(user, packet_of(row)) != "maintainer":
        raise NotFound(what)
    return row


def access_submission(user: AbstractBaseUser, submission_id: int | str) -> Submission:
    rows = Submission.objects.select_related("packet")
    submission = _graded_row(user, rows, submission_id, lambda s: s.packet, "submission")
    verify_submissions([submission])  # its packet column decided access: read through its seal
    return submission


def access_scoring_run(user: AbstractBaseUser, run_id: int | str) -> ScoringRun:
    rows = ScoringRun.objects.select_related("version", "job", "version__packet")
    run = _graded_row(user, rows, run_id, lambda r: r.version.packet, "scoring run")
    verify_runs([run])
    return run


def access_score(user: AbstractBaseUser, score_id: int | str) -> SubmissionScore:
    rows = SubmissionScore.objects.select_related(
        "submission", "run", "version__packet__video", "version__packet__task_kind"
    )
    score = _graded_row(user, rows, score_id, lambda s: s.version.packet, "score")
    verify_scores([score])
    verify_runs([score.run])
    return score


def access_job(user: AbstractBaseUser, job_id: int | str) -> Job:
    """A scoring job, and the derived work of a freeze or a publication (the agreement
    report, calibration anchors: the job names its packet), are grading material of their
    packet; any other job (ingest) is about a video: maintainers' material."""
    if not user.is_authenticated or not user.is_active:
        raise NotFound("job")
    try:
        job = Job.objects.select_related("scoring_run__version__packet", "packet").filter(pk=int(job_id)).first()
    except (ValueError, TypeError):
        job = None
    if job is None:
        raise NotFound("job")
    run = getattr(job, "scoring_run", None)
    packet = run.version.packet if run is not None else job.packet
    if packet is not None:
        if role_on_packet(user, packet) != "maintainer":
            raise NotFound("job")
    elif not is_maintainer(user):
        raise NotFound("job")
    return job


def access_packet_assignment(user: AbstractBaseUser, packet_id: int | str) -> PacketAccess:
    """Reassigning a packet's annotator: a person whose role on the packet is maintainer."""
    return _packet_with_role(user, packet_id, {"maintainer"}, "packet")


def access_label_import(user: AbstractBaseUser, packet_id: int | str) -> PacketAccess:
    """Importing third-party labels into the provisional tier (which only the packet's
    maintainers may see): a person whose role on the packet is maintainer."""
    return _packet_with_role(user, packet_id, {"maintainer"}, "packet")


def may_import_labels(user: AbstractBaseUser, packet: Packet) -> bool:
    """Whether ``user`` may write (and so compare against) a packet's provisional tier:
    only a person whose role on the packet is maintainer, like ``access_label_import``. A
    maintainer who annotates or adjudicates the packet may not: an import answers
    "unchanged" or "updated", an equality oracle on the key of his own blind packet."""
    return role_on_packet(user, packet) == "maintainer"


def access_full_rendition(user: AbstractBaseUser, packet_id: int | str) -> PacketAccess:
    """The full-height rendition of a packet's video (status, and asking for it): anyone
    on the packet, as for its other media. It is the video's, shared by every packet on
    it, and its status never says who asked (``sees_rendition_progress``)."""
    return access_packet(user, packet_id)


def sees_rendition_progress(access: PacketAccess, asked: bool) -> bool:
    """Whether the person sees a full rendition being made (queued, running, failed): staff
    always; an annotator only once they asked for it themselves (``asked``), so that the
    status never turns from "none" to "queued" because the other annotator asked."""
    return not access.is_annotator or asked


def access_packet_search(user: AbstractBaseUser, packet_id: int | str) -> PacketAccess:
    """Moment search on a packet's video: its adjudicator always, its maintainers, and
    its annotators only when the task kind's schema sets ``annotator_assistance`` (off
    by default, so blind packets get none). Results depend on the video's features
    only, never on a ledger; anyone else gets the answer a missing packet gets."""
    access = _packet_with_role(user, packet_id, {"adjudicator", "maintainer", "annotator_a", "annotator_b"}, "search")
    if access.is_annotator and access.packet.task_kind.schema.get("annotator_assistance") is not True:
        raise NotFound("search")
    return access
