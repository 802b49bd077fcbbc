"""Fault drill in the browser: Redis (the channel layer) restarted during an editing session.

The API-level drill is tests/deploy/test_fault_redis.py; this one is what the people see.
A ``redis-server`` on its own port, started by the test, is the channel layer of a real
ASGI server (Daphne, tests/browser/asgi_server.py). Annotator A edits in the workspace
while the maintainer watches the packet page, where presence is visible to staff (an
annotator is never shown the other annotator). The test kills Redis (SIGKILL) mid-session:
both pages say their live channel is lost, A keeps editing and every edit is saved to the
database (saves never need Redis). Redis comes back on the same port: both sockets
reconnect, the maintainer sees A again, and the ledger in the database holds exactly
what A typed.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from annotator.models import Ledger
from tests.browser import asgi_server as asgi
from tests.browser.ledger_pages import add_action_by_keyboard, wait_saved
from tests.deploy.stack import wait_for
from tests.http.live_server import free_port

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

asgi_server = asgi.asgi_server
open_as = asgi.open_as

VIDEO = "h264-2997-gop12"
RECONNECT_MS = 45000  # back-off tops out at 30 s (live.js); with slack for a loaded machine


class RedisServer:
    def __init__(self, folder):
        self.port = free_port()
        self.folder = folder
        self.process = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )  # fmt: skip

        def pong() -> bool:
            ping = subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True)
            return b"PONG" in ping.stdout

        wait_for(pong, 20, "redis-server")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # SIGKILL: no goodbye to the clients
            self.process.wait()


@pytest.fixture
def redis_layer(settings, tmp_path):
    """A redis-server of this test's own, as the channel layer of the ASGI server (which
    takes the settings of the moment it starts: request this fixture before ``open_as``)."""
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        pytest.skip("redis-server is not installed")
    redis = RedisServer(tmp_path)
    redis.start()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [f"redis://127.0.0.1:{redis.port}/0"], "prefix": f"drill{redis.port}"},
        }
    }
    yield redis
    redis.kill()


def server_events(packet) -> list[tuple]:
    ledger = Ledger.objects.get(packet=packet, side="A")
    return sorted(
        (e.data["start_frame"], e.data["end_frame"], e.data["verb"], tuple(e.data["nouns"]))
        for e in ledger.events.all()
    )


# Records every state the page shows on #presence, with the time it was shown.
RECORD_STATES_JS = """
window.__liveStates = [];
document.addEventListener("DOMContentLoaded", () => {
  const box = document.querySelector("#presence");
  new MutationObserver(() => {
    const states = window.__liveStates;
    const state = box.dataset.live;
    if (!states.length || states[states.length - 1][0] !== state) states.push([state, Date.now()]);
  }).observe(box, { attributes: true, attributeFilter: ["data-live"] });
});
"""


def record_states(page) -> None:
    page.add_init_script(RECORD_STATES_JS)
    page.sockets_opened = []
    page.on("websocket", lambda ws: page.sockets_opened.append(ws.url))


def states(page) -> list[str]:
    return [state for state, _ in page.evaluate("window.__liveStates")]


def wait_live_state(page, state: str, timeout: float) -> None:
    page.wait_for_function("(s) => document.querySelector('#presence').dataset.live === s", arg=state, timeout=timeout)


def sees(page, username: str, timeout: float) -> None:
    page.wait_for_function(
        "(u) => document.querySelector('#presence').dataset.live === 'live'"
        " && document.querySelector(`#presence [data-username=${u}]`)",
        arg=username,
        timeout=timeout,
    )


def test_redis_killed_and_restarted_mid_edit_loses_nothing_and_presence_recovers(
    redis_layer, open_as, media_packet, maintainer, annotator_a
):
    packet = media_packet(VIDEO)
    boss = open_as(maintainer, f"/packets/{packet.pk}/", before=record_states)
    page = open_as(annotator_a, f"/packets/{packet.pk}/", before=record_states)
    sees(boss, "annotator_a", 20000)
    wait_live_state(page, "live", 20000)
    sockets_before = len(page.ws_frames)

    add_action_by_keyboard(page, 10, 30, "take", ["egg"])
    wait_saved(page)

    opened = len(page.sockets_opened), len(boss.sockets_opened)
    redis_layer.kill()
    # Both pages say so: the server closes a socket whose layer is gone, the page shows it.
    wait_live_state(page, "offline", 20000)
    wait_live_state(boss, "offline", 20000)
    assert "reconnecting" in page.inner_text("#presence")
    assert "annotator_a" not in boss.inner_text("#presence")  # no stale presence is claimed

    # A keeps editing; saves go to PostgreSQL/SQLite, not Redis.
    add_action_by_keyboard(page, 50, 70, "crack", ["egg"])
    wait_saved(page)
    add_action_by_keyboard(page, 100, 130, "pour", ["milk", "bowl"])
    wait_saved(page)
    assert server_events(packet) == [
        (10, 30, "take", ("egg",)),
        (50, 70, "crack", ("egg",)),
        (100, 130, "pour", ("bowl", "milk")),
    ]

    # Stay down through a few reconnect attempts (back-off 1 s, 2 s, ...): two more sockets
    # opened by each page since the layer went (each "websocket" event is one attempt).
    for viewer, before in ((page, opened[0]), (boss, opened[1])):
        while len(viewer.sockets_opened) < before + 2:
            viewer.wait_for_event("websocket", timeout=RECONNECT_MS)
    assert len(page.sockets_opened) > opened[0] and len(boss.sockets_opened) > opened[1]  # they kept trying
    # ... and never claimed a live channel it could not have (the handshake fails while
    # the layer is down; it used to be accepted and then dropped, flashing "live").
    assert states(page) == ["live", "offline"] and states(boss) == ["live", "offline"]
    assert "reconnecting" in page.inner_text("#presence") and "reconnecting" in boss.inner_text("#presence")

    redis_layer.start()  # same port
    wait_live_state(page, "live", RECONNECT_MS)
    sees(boss, "annotator_a", RECONNECT_MS)
    add_action_by_keyboard(page, 160, 180, "put", ["bowl"])
    wait_saved(page)

    assert server_events(packet) == [
        (10, 30, "take", ("egg",)),
        (50, 70, "crack", ("egg",)),
        (100, 130, "pour", ("bowl", "milk")),
        (160, 180, "put", ("bowl",)),
    ]
    assert page.inner_text("#ledger-table tbody").count("unsaved") == 0
    assert page.evaluate("window.frameledger.store.getState().pending.length") == 0
    assert len(page.ws_frames) > sockets_before
    # Blindness held throughout: A's page was only ever told about A.
    assert all("maintainer" not in frame and "annotator_b" not in frame for frame in page.ws_frames)
