"""Bad websocket frames get an error message, never a dead consumer or a ghost.

Issue 10, item 5: a non-JSON frame on ``ws/packets/<id>/`` killed the consumer (close
1011) without ``disconnect()``; its heartbeat task kept announcing the socket, so staff
saw a ghost ("annotator_b tabs: 3" long after B left), and any packet member could
repeat it without limit. These run the real consumers through Channels' communicator,
on the in-memory layer and (marked ``redis``) on the channels-redis layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os

import pytest
from asgiref.sync import async_to_sync
from channels.layers import channel_layers, get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from annotator.base import sockets
from annotator.entry.routing import websocket_urlpatterns
from annotator.models import Job
from annotator.reads import realtime

pytestmark = pytest.mark.django_db(transaction=True)

QUIET = 0.2
BAD_FRAMES = [
    {"text_data": "not json"},
    {"text_data": "[1, 2]"},
    {"text_data": '{"type": "launch"}'},
    {"text_data": "[" * 3000},
    {"text_data": '{"type": "ping", "pad": "' + "x" * 70_000 + '"}'},
    {"bytes_data": b"\x00\x01binary"},
]


@pytest.fixture(autouse=True)
def _migration_rows(transactional_db):
    from django.apps import apps

    importlib.import_module("annotator.migrations.0002_builtin_task_kinds").create_builtin_kinds(apps, None)


def use_layer(settings, backend: dict):
    settings.CHANNEL_LAYERS = {"default": backend}
    channel_layers.backends = {}


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def layer(request, settings):
    if request.param == "redis":
        url = os.environ.get("REDIS_URL")
        if not url:
            pytest.skip("needs Redis: set REDIS_URL=redis://... (the CI run does)")
        prefix = f"test-bad-frames-{os.getpid()}"
        use_layer(settings, {"BACKEND": "channels_redis.core.RedisChannelLayer",
                             "CONFIG": {"hosts": [url], "prefix": prefix}})  # fmt: skip
    else:
        use_layer(settings, {"BACKEND": "channels.layers.InMemoryChannelLayer"})
    yield request.param
    channel_layers.backends = {}


async def connect(path, user):
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    assert connected, code
    return communicator


async def people(communicator) -> list[tuple]:
    """Drain the socket; the people in the last presence message."""
    last = None
    while not await communicator.receive_nothing(timeout=QUIET):
        message = await communicator.receive_json_from(timeout=2)
        if message["type"] == "presence":
            last = [(p["username"], p["tabs"]) for p in message["people"]]
    return last


def heartbeats() -> int:
    """Heartbeat tasks of packet sockets still running in this event loop."""
    return sum(1 for task in asyncio.all_tasks() if "PacketConsumer._beat" in repr(task.get_coro()))


async def send(communicator, frame: dict):
    if "bytes_data" in frame:
        await communicator.send_to(bytes_data=frame["bytes_data"])
    else:
        await communicator.send_to(text_data=frame["text_data"])


def test_a_non_json_frame_gets_an_error_and_the_socket_lives_on(layer, packet, annotator_b):
    async def scenario():
        b = await connect(f"/ws/packets/{packet.pk}/", annotator_b)
        await people(b)
        for frame in BAD_FRAMES:
            await send(b, frame)
            error = await b.receive_json_from(timeout=2)
            assert error["type"] == "error" and error["error"]["code"] == "bad_frame", error
            assert error["error"]["message"]
        await b.send_json_to({"type": "ping"})
        assert await b.receive_json_from(timeout=2) == {"type": "pong"}
        await b.disconnect()

    async_to_sync(scenario)()


def test_a_socket_that_sent_a_bad_frame_leaves_no_ghost_in_presence(layer, packet, annotator_b, adjudicator):
    async def scenario():
        staff = await connect(f"/ws/packets/{packet.pk}/", adjudicator)
        b = await connect(f"/ws/packets/{packet.pk}/", annotator_b)
        assert ("annotator_b", 1) in await people(staff)
        await b.send_to(text_data="not json")
        # The error message; before issue 10 the consumer died here instead (close 1011,
        # no disconnect()), which these lines let happen so the ghost shows below.
        with contextlib.suppress(Exception):
            await b.receive_output(timeout=2)
        with contextlib.suppress(Exception):
            await b.disconnect()
        # ``None``: staff never heard B leave, and B stays listed (a ghost).
        assert await people(staff) == [("adjudicator", 1)]
        assert heartbeats() == 1  # the staff socket's own
        await staff.disconnect()
        await asyncio.sleep(0)
        assert heartbeats() == 0

    async_to_sync(scenario)()


def test_bad_frames_are_capped_per_connection(layer, packet, annotator_b, adjudicator):
    async def scenario():
        staff = await connect(f"/ws/packets/{packet.pk}/", adjudicator)
        b = await connect(f"/ws/packets/{packet.pk}/", annotator_b)
        await people(b)
        assert ("annotator_b", 1) in await people(staff)
        for _ in range(sockets.MAX_BAD_FRAMES):
            await b.send_to(text_data="not json")
            assert (await b.receive_json_from(timeout=2))["type"] == "error"
        await b.send_to(text_data="one too many")
        closed = await b.receive_output(timeout=2)
        assert closed == {"type": "websocket.close", "code": sockets.BAD_FRAMES_CLOSE_CODE}
        # Cleaned up without waiting for the client: presence says goodbye, no heartbeat is left.
        assert await people(staff) == [("adjudicator", 1)]
        assert heartbeats() == 1  # the staff socket's own
        await staff.disconnect()
        await asyncio.sleep(0)
        assert heartbeats() == 0

    async_to_sync(scenario)()


def test_a_consumer_that_fails_in_a_handler_still_leaves_presence(layer, packet, annotator_b, adjudicator):
    async def scenario():
        staff = await connect(f"/ws/packets/{packet.pk}/", adjudicator)
        b = await connect(f"/ws/packets/{packet.pk}/", annotator_b)
        await people(b)
        assert ("annotator_b", 1) in await people(staff)
        # A malformed message from inside (only B's tabs hear it): B's handler raises.
        layer = get_channel_layer()
        await layer.group_send(realtime.user_group(packet.pk, annotator_b.pk), {"type": "presence.hello", "member": {}})
        with contextlib.suppress(Exception):
            await b.receive_output(timeout=2)
        assert b.future.done() and isinstance(b.future.exception(), KeyError)
        assert await people(staff) == [("adjudicator", 1)]
        assert heartbeats() == 1
        await staff.disconnect()

    async_to_sync(scenario)()


def test_a_bad_frame_on_a_job_socket_gets_an_error_and_the_relay_goes_on(layer, maintainer):
    job = Job.objects.create(kind="ingest", created_by=maintainer)

    async def scenario():
        socket = await connect(f"/ws/jobs/{job.pk}/", maintainer)
        assert (await socket.receive_json_from(timeout=5))["status"] == "queued"
        await socket.send_to(text_data="not json")
        assert (await socket.receive_json_from(timeout=2))["error"]["code"] == "bad_frame"
        await asyncio.to_thread(lambda: Job.objects.filter(pk=job.pk).update(status="done", progress=1.0))
        assert (await socket.receive_json_from(timeout=5))["status"] == "done"
        await socket.disconnect()

    async_to_sync(scenario)()
