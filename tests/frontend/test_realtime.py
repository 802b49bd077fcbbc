"""The live packet channel (``/ws/packets/<id>/``) through Channels' test communicator.

Presence respects blindness: an annotator is told only about their own tabs and never
receives a message caused by anyone else; the adjudicator and maintainers see
everyone. Union decisions reach staff sockets after the transaction commits.
"""

from __future__ import annotations

import importlib

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import transaction

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.base.errors import InvalidInput
from annotator.entry.routing import websocket_urlpatterns
from annotator.models import Ledger, UnionItem
from annotator.reads import realtime

# Consumers close old connections between database calls (channels), which an open
# test transaction would not survive: these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)

QUIET = 0.2  # seconds to wait for a message that must not come


@pytest.fixture(autouse=True)
def _migration_rows(transactional_db):
    """Re-create what the data migration made (task kinds, the maintainers group): a
    transactional test flushes every table, and ``serialized_rollback`` clashes with the
    content types other transactional suites leave behind."""
    from django.apps import apps

    importlib.import_module("annotator.migrations.0002_builtin_task_kinds").create_builtin_kinds(apps, None)


@pytest.fixture(autouse=True)
def fresh_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends = {}
    yield
    channel_layers.backends = {}


async def connect(packet, user):
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/packets/{packet.pk}/")
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    return communicator, connected, code


async def presence(communicator) -> list[tuple]:
    message = await communicator.receive_json_from(timeout=2)
    assert message["type"] == "presence"
    return [(p["username"], p["role"], p["tabs"], p["you"]) for p in message["people"]]


async def latest_presence(communicator) -> list[tuple]:
    """Drain the socket; the last presence message."""
    last = None
    while not await communicator.receive_nothing(timeout=QUIET):
        last = await presence(communicator)
    return last


def test_an_annotator_hears_nothing_of_the_other_annotator_or_of_staff(
    packet, annotator_a, annotator_b, adjudicator, maintainer
):
    async def scenario():
        a, ok, _ = await connect(packet, annotator_a)
        assert ok
        assert await presence(a) == [("annotator_a", "annotator_a", 1, True)]
        b, ok, _ = await connect(packet, annotator_b)
        assert ok
        assert await presence(b) == [("annotator_b", "annotator_b", 1, True)]
        adj, ok, _ = await connect(packet, adjudicator)
        assert ok
        boss, ok, _ = await connect(packet, maintainer)
        assert ok
        # Staff see everyone on the packet.
        assert await latest_presence(adj) == [
            ("adjudicator", "adjudicator", 1, True),
            ("annotator_a", "annotator_a", 1, False),
            ("annotator_b", "annotator_b", 1, False),
            ("maintainer", "maintainer", 1, False),
        ]
        # B and the staff came and went: A received nothing at all, not even a timing cue.
        await b.disconnect()
        await boss.disconnect()
        assert await a.receive_nothing(timeout=QUIET)
        assert await latest_presence(adj) == [
            ("adjudicator", "adjudicator", 1, True),
            ("annotator_a", "annotator_a", 1, False),
        ]
        # A second tab of A's own is the one thing A is told about.
        a2, ok, _ = await connect(packet, annotator_a)
        assert ok
        assert await latest_presence(a) == [("annotator_a", "annotator_a", 2, True)]
        assert await latest_presence(a2) == [("annotator_a", "annotator_a", 2, True)]
        for socket in (a, a2, adj):
            await socket.disconnect()

    async_to_sync(scenario)()


def test_people_outside_the_packet_are_refused(packet, outsider):
    async def scenario():
        communicator, connected, code = await connect(packet, outsider)
        assert not connected and code == 4404

    async_to_sync(scenario)()


def frozen_union(packet, annotator_a, annotator_b, adjudicator):
    for side, actor, event in (
        ("A", annotator_a, {"verb": "take", "nouns": ["egg"], "start_frame": 10, "end_frame": 20}),
        ("B", annotator_b, {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 20}),
    ):
        ledger = Ledger.objects.get(packet=packet, side=side)
        do_add_event(ledger, event, actor=actor, expected_version=ledger.version)
        do_freeze_ledger(
            ledger, actor=actor, attestation="I labelled this alone, honestly.", expected_version=ledger.version
        )
    union = do_build_union(packet, actor=adjudicator)
    return UnionItem.objects.get(union=union, status="conflicting")


def test_the_decision_broadcast_runs_only_after_the_decision_is_committed(
    packet, annotator_a, annotator_b, adjudicator, monkeypatch
):
    item = frozen_union(packet, annotator_a, annotator_b, adjudicator)
    calls = []
    monkeypatch.setattr(
        realtime,
        "broadcast_union_item",
        lambda packet_id, position: calls.append((packet_id, position, transaction.get_connection().in_atomic_block)),
    )
    with transaction.atomic():
        do_decide_item(item, actor=adjudicator, action="take_b", rationale="the cup is visible")
        assert calls == []
    assert calls == [(packet.pk, item.position, False)]
    # A decision that fails validation broadcasts nothing.
    with pytest.raises(InvalidInput), transaction.atomic():
        do_decide_item(item, actor=adjudicator, action="take_b", rationale="")
    assert len(calls) == 1


def test_a_decision_reaches_staff_sockets_and_never_annotators(
    packet, annotator_a, annotator_b, adjudicator, maintainer
):
    item = frozen_union(packet, annotator_a, annotator_b, adjudicator)
    sockets = {}

    def decide() -> None:
        with transaction.atomic():
            do_decide_item(item, actor=adjudicator, action="take_b", rationale="the cup is visible")

    async def scenario():
        for user in (annotator_a, adjudicator, maintainer):
            sockets[user.username], ok, _ = await connect(packet, user)
            assert ok
        for socket in sockets.values():
            await latest_presence(socket)
        await database_sync_to_async(decide)()
        # Staff get the item; the annotator nothing.
        for name in ("adjudicator", "maintainer"):
            message = await sockets[name].receive_json_from(timeout=2)
            assert message["type"] == "union_item"
            assert message["item"]["position"] == item.position
            assert message["item"]["decision"]["action"] == "take_b"
            assert message["item"]["decision"]["decided_by"] == "adjudicator"
        assert await sockets["annotator_a"].receive_nothing(timeout=QUIET)
        for socket in sockets.values():
            await socket.disconnect()

    async_to_sync(scenario)()


def test_a_deactivated_persons_open_socket_is_closed_and_hears_no_more_presence(
    packet, annotator_a, adjudicator, maintainer
):
    from annotator.actions.people import do_set_active

    async def scenario():
        adj, ok, _ = await connect(packet, adjudicator)
        assert ok
        await latest_presence(adj)
        await database_sync_to_async(do_set_active)(actor=maintainer, person=adjudicator, active=False)
        closed = await adj.receive_output(timeout=2)
        while closed["type"] != "websocket.close":  # a goodbye may come first
            closed = await adj.receive_output(timeout=2)
        assert closed["code"] == realtime.REVOKED_CLOSE_CODE
        # Someone joining afterwards: the closed socket is told nothing.
        a, ok, _ = await connect(packet, annotator_a)
        assert ok
        heard = []
        while not await adj.receive_nothing(timeout=QUIET):
            heard.append(await adj.receive_output(timeout=1))
        assert not [m for m in heard if "annotator_a" in str(m)], heard
        await a.disconnect()
        # Reconnecting is refused like for anyone with no role.
        _, ok, code = await connect(packet, await database_sync_to_async(reloaded)(adjudicator))
        assert not ok and code == 4404

    async_to_sync(scenario)()


def test_the_heartbeat_closes_a_socket_whose_role_is_gone_even_without_the_broadcast(packet, adjudicator, monkeypatch):
    monkeypatch.setattr(realtime, "HEARTBEAT_SECONDS", 0.05)

    async def scenario():
        adj, ok, _ = await connect(packet, adjudicator)
        assert ok
        await latest_presence(adj)
        # Deactivated by SQL (no broadcast): the next heartbeat finds it.
        await database_sync_to_async(type(adjudicator).objects.filter(pk=adjudicator.pk).update)(is_active=False)
        closed = await adj.receive_output(timeout=2)
        while closed["type"] != "websocket.close":
            closed = await adj.receive_output(timeout=2)
        assert closed["code"] == realtime.REVOKED_CLOSE_CODE

    async_to_sync(scenario)()


def reloaded(user):
    return type(user).objects.get(pk=user.pk)
