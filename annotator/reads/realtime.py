"""The live packet channel: presence that respects blindness, and live adjudication.

``/ws/packets/<id>/`` accepts anyone ``access_packet`` lets through (others: close 4404).

Groups, and who is in them:

- ``packet-<id>-staff``: the adjudicator's and maintainers' sockets. Presence of
  everyone on the packet and every change to a union item reach this group.
- ``packet-<id>-user-<user id>``: every socket of one person on the packet (their tabs).
- ``packet-<id>-all``: every socket; used only for a staff socket's roll call.

An annotator's socket announces itself to the staff group and to its own tabs only, so
the other annotator's socket never hears of it. It answers a staff roll call (so the
adjudicator sees who is here) without passing anything to its browser, and what it
sends its browser is about its own tabs only: neither the content nor the timing of
what an annotator receives says anything about the other annotator. Staff sockets
see everyone.

Presence is kept by the sockets themselves (no table): a new socket says ``hello``,
those allowed to know it exists answer ``here`` to it directly, a closing socket says
``bye``, and a heartbeat refreshes entries, which expire when not refreshed (a
crashed web process). This works with the in-memory layer within one process and
with the Redis layer across processes.

Frames from the browser, and cleanup however a socket ends (so a socket that crashed
or sent garbage never lingers as a ghost), are handled by
:class:`annotator.base.sockets.GuardedJsonConsumer`.

Union item changes are broadcast by :func:`broadcast_union_item`, called through
``transaction.on_commit`` by ``do_decide_item`` so a message never precedes its row.
"""

from __future__ import annotations

import asyncio
import logging
import time

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from annotator.base.sockets import GuardedJsonConsumer
from annotator.reads import access

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 20.0
EXPIRE_SECONDS = 3 * HEARTBEAT_SECONDS


def staff_group(packet_id: int) -> str:
    return f"packet-{packet_id}-staff"


def user_group(packet_id: int, user_id: int) -> str:
    return f"packet-{packet_id}-user-{user_id}"


def person_group(user_id: int) -> str:
    """Every live socket of one person, whatever the packet: told when their account is
    deactivated or their roles change (``revoke_person``)."""
    return f"person-{user_id}"


REVOKED_CLOSE_CODE = 4403


def current_role(user_id: int, packet_id: int) -> str | None:
    """The person's role on the packet as the database says now (the socket's user object
    was read at the handshake: a deactivation since then is not in it)."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).first()
    return role_on(user, packet_id) if user is not None else None


def revoke_person(user_id: int) -> None:
    """Tell the person's live sockets to check their role again (after a deactivation or a
    role change). Call after commit. A failure is logged: each socket also checks at every
    heartbeat."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(person_group(user_id), {"type": "person.revoked"})
    except Exception as error:
        logger.warning("person %s: could not tell their live sockets (%s)", user_id, error)


def all_group(packet_id: int) -> str:
    return f"packet-{packet_id}-all"


def role_on(user, packet_id: int) -> str | None:
    try:
        return access.access_packet(user, packet_id).role
    except access.NotFound:
        return None


def may_know(viewer: dict, member: dict) -> bool:
    """May the socket ``viewer`` be told that ``member`` is connected?"""
    return access.sees_everyone_present(viewer["role"]) or viewer["user_id"] == member["user_id"]


def presence_view(viewer: dict, members: list[dict]) -> list[dict]:
    """People on the packet as ``viewer`` may see them, one entry per person and role."""
    people: dict[tuple, dict] = {}
    for member in members:
        if not may_know(viewer, member):
            continue
        key = (member["username"], member["role"])
        you = member["user_id"] == viewer["user_id"]
        entry = people.setdefault(key, {"username": member["username"], "role": member["role"], "tabs": 0, "you": you})
        entry["tabs"] += 1
    return sorted(people.values(), key=lambda p: (not p["you"], p["role"], p["username"]))


class PacketConsumer(GuardedJsonConsumer):
    async def connect(self):
        user = self.scope.get("user")
        self.packet_id = int(self.scope["url_route"]["kwargs"]["packet_id"])
        role = await database_sync_to_async(role_on)(user, self.packet_id) if user is not None else None
        if role is None:
            await self.close(code=4404)
            return
        self.member = {"channel": self.channel_name, "user_id": user.pk, "username": user.username, "role": role}
        self.members: dict[str, tuple[dict, float]] = {self.channel_name: (self.member, time.monotonic())}
        self.joined = [user_group(self.packet_id, user.pk), all_group(self.packet_id), person_group(user.pk)]
        if access.sees_everyone_present(role):
            self.joined.append(staff_group(self.packet_id))
        # Join the groups before accepting: without a channel layer (Redis down) the
        # handshake is refused, so the page never shows a live channel that cannot work,
        # and its reconnect back-off keeps growing instead of restarting at every accept.
        try:
            for group in self.joined:
                await self.channel_layer.group_add(group, self.channel_name)
        except Exception as error:  # whatever the channel layer's client raises when it is down
            logger.warning("packet %s: the channel layer is unavailable (%s); handshake refused", self.packet_id, error)
            self.member = None  # no hello was sent: nothing to say goodbye to
            await self.close(code=1013)  # before accept: the handshake is refused (HTTP 403)
            return
        await self.accept()
        await self._announce("presence.hello")
        await self._send_presence()
        self.heartbeat = asyncio.ensure_future(self._beat())

    @property
    def is_staff(self) -> bool:
        return access.sees_everyone_present(self.member["role"])

    async def _announce(self, kind: str) -> None:
        # Everyone who may know this socket exists: staff, and the person's own tabs.
        # A new staff socket also calls the roll, so it learns about annotators.
        groups = {staff_group(self.packet_id), user_group(self.packet_id, self.member["user_id"])}
        if kind == "presence.hello" and self.is_staff:
            groups.add(all_group(self.packet_id))
        for group in groups:
            await self.channel_layer.group_send(group, {"type": kind, "member": self.member})

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            if not await self._still_allowed():
                return
            await self._announce("presence.here")
            cutoff = time.monotonic() - EXPIRE_SECONDS
            stale = [ch for ch, (_, seen) in self.members.items() if seen < cutoff and ch != self.channel_name]
            for channel in stale:
                del self.members[channel]
            if stale:
                await self._send_presence()

    async def _send_presence(self) -> None:
        members = [member for member, _ in self.members.values()]
        await self.send_json({"type": "presence", "people": presence_view(self.member, members)})

    async def _learn(self, member: dict) -> bool:
        if member["channel"] == self.channel_name or not may_know(self.member, member):
            return False
        known = member["channel"] in self.members
        self.members[member["channel"]] = (member, time.monotonic())
        if not known:
            await self._send_presence()
        return not known

    async def presence_hello(self, event):
        member = event["member"]
        await self._learn(member)
        if member["channel"] != self.channel_name and may_know(member, self.member):
            await self.channel_layer.send(member["channel"], {"type": "presence.here", "member": self.member})

    async def presence_here(self, event):
        await self._learn(event["member"])

    async def presence_bye(self, event):
        if self.members.pop(event["member"]["channel"], None) is not None:
            await self._send_presence()

    async def _still_allowed(self) -> bool:
        """The role this socket was opened with, still the person's: else it is closed
        (a deactivated account, a role taken away) and hears nothing more."""
        role = await database_sync_to_async(current_role)(self.member["user_id"], self.packet_id)
        if role == self.member["role"]:
            return True
        if asyncio.current_task() is getattr(self, "heartbeat", None):
            self.heartbeat = None  # the heartbeat itself found it: it ends here, not cancelled mid-goodbye
        await self._cleanup_once()
        await self.close(code=REVOKED_CLOSE_CODE)
        return False

    async def person_revoked(self, event):
        await self._still_allowed()

    async def union_item(self, event):
        if self.is_staff:
            await self.send_json({"type": "union_item", "item": event["item"]})

    async def cleanup(self):
        """Say goodbye and stop the heartbeat, whatever ended the socket (``annotator.base.sockets``)."""
        member = getattr(self, "member", None)
        if member is None:
            return
        heartbeat = getattr(self, "heartbeat", None)
        if heartbeat is not None:
            heartbeat.cancel()
        try:
            await self._announce("presence.bye")
        finally:
            for group in self.joined:
                await self.channel_layer.group_discard(group, self.channel_name)


def broadcast_union_item(packet_id: int, position: int) -> None:
    """Tell the packet's staff sockets about a union item's new state. Call after commit.

    A failure here is logged, never raised: the decision it reports is already saved,
    and every page reloads the union from the API anyway.
    """
    from annotator.models import UnionItem
    from annotator.reads.present import union_item_view

    try:
        item = UnionItem.objects.select_related("decision", "decision__decided_by").get(
            union__packet_id=packet_id, position=position
        )
        layer = get_channel_layer()
        if layer is None:
            return
        async_to_sync(layer.group_send)(staff_group(packet_id), {"type": "union.item", "item": union_item_view(item)})
    except Exception:
        logger.exception("could not broadcast union item %s/%s", packet_id, position)
