"""Separation of duties: who is blind on which packet, and who may hold whose password.

Facts only; ``annotator.reads.access`` makes the decisions from them (``docs/workflow.md``,
"Separation of duties").

**Blind on a packet**: its adjudicator (for good: decisions stay revisable, so the
provisional tier and its grading stay hidden), and its annotators until an adjudicated
version is published (:func:`released_packet_id`).

**Who may know an account's password** is read from the audit log, where every credential
write of ``annotator.actions.people`` is recorded with its actor:

- ``set_password`` by another person: that person chose the password (*certain*);
- ``set_own_password`` (through a one-time link): whoever held a link issued since the
  password was last set may have used it (``invite_person``, ``issue_password_link``):
  the issuers are *possible* knowers. A link works once, so an invitee who did sign in with
  it knows nobody used it before them.

Knowledge is transitive: a person who may hold M's password may set, as M, the password
of a third account. :func:`credential_knowers` follows the chain and keeps the weakest link
of the strongest chain. Actions of the operator (``manage.py``, no actor) make nobody a
knower.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from annotator.models import AuditEntry, GroundTruthVersion, Packet
from annotator.reads.integrity import verified_access_columns

CERTAIN, POSSIBLE = "certain", "possible"
LINK_OPERATIONS = ("invite_person", "issue_password_link")
SET_OPERATIONS = ("set_password", "set_own_password")


def released_packet_id(packet_id: int) -> bool:
    """The blind phase of the packet is over for its annotators: an adjudicated version is
    published. The tier column is read through the verified manifest: a version whose tier
    (or packet, or number) was changed by SQL answers the integrity error instead of
    releasing the packet."""
    versions = GroundTruthVersion.objects.filter(packet_id=packet_id, tier=GroundTruthVersion.Tier.ADJUDICATED)
    return any([verified_access_columns(v) for v in versions.defer("canonical_json")])


def is_released(packet: Packet) -> bool:
    return released_packet_id(packet.pk)


def blind_on(packet: Packet, person_id: int) -> bool:
    """Whether the person is blind on the packet (adjudicator; annotator until released)."""
    if person_id == packet.adjudicator_id:
        return True
    if person_id in (packet.annotator_a_id, packet.annotator_b_id):
        return not released_packet_id(packet.pk)
    return False


def blind_packet_ids(person_ids) -> set[int]:
    """The packets on which any of these people is blind."""
    person_ids = list(person_ids)
    if not person_ids:
        return set()
    adjudicated = set(Packet.objects.filter(adjudicator__in=person_ids).values_list("pk", flat=True))
    annotated = Packet.objects.filter(Q(annotator_a__in=person_ids) | Q(annotator_b__in=person_ids))
    blind = {pk for pk in annotated.values_list("pk", flat=True) if not released_packet_id(pk)}
    return adjudicated | blind


def _direct_knowers(user_id: int) -> dict[int, str]:
    """Who, besides the person, may know the account's current password (module docstring)."""
    entries = AuditEntry.objects.filter(
        object_type=get_user_model()._meta.label,
        object_id=str(user_id),
        operation__in=LINK_OPERATIONS + SET_OPERATIONS,
    ).order_by("seq")
    links: set[int] = set()
    known: dict[int, str] = {}
    for actor_id, operation in entries.values_list("actor_id", "operation"):
        if operation in LINK_OPERATIONS:
            if actor_id is not None and actor_id != user_id:
                links.add(actor_id)
        elif operation == "set_password" and actor_id is not None and actor_id != user_id:
            known, links = {actor_id: CERTAIN}, set()
        else:  # set through a link (or by the operator): the links' issuers may have used it
            known, links = dict.fromkeys(links, POSSIBLE), set()
    return known


def credential_knowers(user_id: int) -> dict[int, str]:
    """Everyone who may hold the account's password, directly or through accounts whose
    passwords they may hold, each with ``CERTAIN`` or ``POSSIBLE``. A person's strength
    only rises (unknown, possible, certain), so the walk ends."""
    found: dict[int, str] = {}
    frontier = {user_id: CERTAIN}
    while frontier:
        following: dict[int, str] = {}
        for account, strength in frontier.items():
            for knower, link in _direct_knowers(account).items():
                if knower == user_id:
                    continue
                weakest = CERTAIN if strength == link == CERTAIN else POSSIBLE
                if found.get(knower) == CERTAIN or found.get(knower) == weakest:
                    continue
                found[knower] = weakest
                following[knower] = weakest
        frontier = following
    return found
