"""Fault drill: Redis (channel layer, broker, cache) restarted during an editing session.

A separate ``redis-server`` on a free port, started and killed by the test, serves the stack.
While it is down, saves (PostgreSQL) keep being accepted; websockets that lose the layer are
closed by the server, new ones are refused at the handshake, and the client reconnects (as
the page's socket does, with back-off);
once Redis is back, presence is whole again, and every accepted save is stored."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect

from tests.deploy.stack import run_stack, wait_for
from tests.http.live_server import free_port

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


def start_redis(port: int, folder) -> subprocess.Popen:
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    wait_for(lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0
             and b"PONG" in subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout,
             20, "redis")  # fmt: skip
    return process


class PresenceClient:
    """A packet socket that reconnects when the server closes it, like the page's client
    (``frontend/static/frontend/js/live.js``: reconnecting with back-off)."""

    def __init__(self, stack, session, packet_id: int):
        self.url = f"ws://127.0.0.1:{stack.port}/ws/packets/{packet_id}/"
        self.headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in session.cookies.items()), "Origin": stack.base}
        self.socket = None
        self.people: list[str] = []
        self.reconnects = 0

    def open(self) -> None:
        self.exits = contextlib.ExitStack()
        self.socket = self.exits.enter_context(connect(self.url, additional_headers=self.headers, open_timeout=10))

    def poll(self, seconds: float) -> list[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if self.socket is None:
                    self.open()
                    self.reconnects += 1
                message = json.loads(self.socket.recv(timeout=max(0.05, deadline - time.monotonic())))
                if message.get("type") == "presence":
                    self.people = sorted(p["username"] for p in message["people"])
            except TimeoutError:
                pass
            except (ConnectionClosed, InvalidHandshake, OSError):  # refused while the layer is down
                self.exits.close()
                self.socket = None
                time.sleep(0.5)
        return self.people


def test_redis_restart_during_an_editing_session(tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    port = free_port()
    redis = start_redis(port, tmp_path)
    try:
        with run_stack(tmp_path, web_workers=2, extra_env={"REDIS_URL": f"redis://127.0.0.1:{port}/0"}) as stack:
            base = stack.base
            annotator = stack.session("annotator_a")
            adjudicator = stack.session("adjudicator")
            packet_id = annotator.get(f"{base}/api/packets/").json()[0]["id"]
            watcher = PresenceClient(stack, adjudicator, packet_id)
            editor = PresenceClient(stack, annotator, packet_id)
            watcher.open()
            editor.open()
            wait_for(lambda: "annotator_a" in watcher.poll(1), 20, "presence")

            etag = annotator.get(f"{base}/api/packets/{packet_id}/ledger/").headers["ETag"]
            accepted, statuses = 0, []

            def save(k: int) -> None:
                nonlocal etag, accepted
                event = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5}}
                response = annotator.post(f"{base}/api/packets/{packet_id}/ledger/events/", json=event,
                                          headers={"If-Match": etag})  # fmt: skip
                statuses.append(response.status_code)
                if response.status_code == 201:
                    accepted += 1
                    etag = response.headers["ETag"]

            save(0)
            redis.kill()
            redis.wait()
            for k in range(1, 4):  # edits while Redis is down
                save(k)
                watcher.poll(0.5)
                editor.poll(0.5)
            assert statuses == [201, 201, 201, 201], statuses
            redis = start_redis(port, tmp_path)
            for k in range(4, 6):
                save(k)
            people = wait_for(
                lambda: (editor.poll(1), watcher.poll(1)) and "annotator_a" in watcher.people and watcher.people,
                60,
                "presence after the restart",
            )
            assert people == ["adjudicator", "annotator_a"], people
            assert watcher.reconnects >= 1 and editor.reconnects >= 1
            ledger = annotator.get(f"{base}/api/packets/{packet_id}/ledger/").json()
            assert len(ledger["events"]) == accepted == 6 and ledger["version"] == 6
            assert annotator.get(f"{base}/readyz").status_code == 200
    finally:
        redis.kill()
        redis.wait()
