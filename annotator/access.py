"""The only way code obtains a packet, a ledger, a union or a ground-truth version.

Every function takes the requesting user and raises ``NotFound`` when the user may not
see the object: an outsider, or an annotator asking for anything about the other
ledger, gets exactly the answer a non-existent object would get. Blindness lives here.

Roles on a packet, from most to least restrictive:
- ``annotator`` (A or B): own ledger only. A person assigned as annotator gets this
  role on that packet whatever other roles they hold.
- ``adjudicator``: both ledgers and the union, only once both ledgers are frozen.
- ``maintainer`` (member of the ``maintainers`` group, or a superuser): progress of
  both ledgers at any time (status and counts only); contents once both are frozen;
  every ground-truth tier.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from annotator.models import GroundTruthVersion, Ledger, Packet, Union, Video

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


def is_maintainer(user: AbstractBaseUser) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or user.groups.filter(name=MAINTAINERS_GROUP).exists()


def require_maintainer(user: AbstractBaseUser) -> None:
    """Maintainer-only material: everyone else gets the answer a missing object gets."""
    if not is_maintainer(user):
        raise NotFound("maintainers only")


def role_on_packet(user: AbstractBaseUser, packet: Packet) -> str | None:
    if not user.is_authenticated or not user.is_active:
        return None
    if packet.annotator_a_id == user.pk:
        return "annotator_a"
    if packet.annotator_b_id == user.pk:
        return "annotator_b"
    if packet.adjudicator_id == user.pk:
        return "adjudicator"
    if is_maintainer(user):
        return "maintainer"
    return None


def visible_packets(user: AbstractBaseUser) -> QuerySet[Packet]:
    packets = Packet.objects.select_related("video", "task_kind")
    if is_maintainer(user):
        return packets
    if not user.is_authenticated:
        return packets.none()
    return packets.filter(Q(annotator_a=user) | Q(annotator_b=user) | Q(adjudicator=user))


def access_packet(user: AbstractBaseUser, packet_id: int | str, *, for_update: bool = False) -> PacketAccess:
    try:
        packets = Packet.objects.select_related("video", "task_kind")
        if for_update:
            packets = packets.select_for_update()
        packet = packets.get(pk=int(packet_id))
    except (Packet.DoesNotExist, ValueError, TypeError):
        raise NotFound("packet") from None
    role = role_on_packet(user, packet)
    if role is None:
        raise NotFound("packet")
    return PacketAccess(packet, role)


def access_video(user: AbstractBaseUser, video_id: int | str) -> Video:
    """Videos outside a packet are maintainers' material."""
    if not is_maintainer(user):
        raise NotFound("video")
    try:
        return Video.objects.get(pk=int(video_id))
    except (Video.DoesNotExist, ValueError, TypeError):
        raise NotFound("video") from None


def both_frozen(packet: Packet) -> bool:
    return Ledger.objects.filter(packet=packet, frozen_at__isnull=False).count() == 2


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
        return ledgers.get(packet_id=int(packet_id), annotator=user)
    except (Ledger.DoesNotExist, ValueError, TypeError):
        raise NotFound("ledger") from None


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
    return Ledger.objects.select_related("packet").get(packet=access.packet, side=side)


def access_union(user: AbstractBaseUser, packet_id: int | str) -> tuple[PacketAccess, Union]:
    access = access_packet(user, packet_id)
    if access.role not in {"adjudicator", "maintainer"}:
        raise NotFound("union")
    try:
        return access, Union.objects.get(packet=access.packet)
    except Union.DoesNotExist:
        raise NotFound("union") from None


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
    return access, version
