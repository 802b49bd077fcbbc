"""Locust users for ``bench/load.py`` (run by it; the plan comes from ``LOAD_PLAN``).

- ``Annotator`` (many): a presence websocket open the whole time; every 1.5-3 s one of:
  autosave a new event (weight 4), autosave an edit of one of its events (3), a seek (the
  frame table, 1), a proxy Range read of 256 KiB at a random offset (2), a ledger reload (1).
  Every save carries ``If-Match``; accepted saves are counted per ledger (``LOAD_RESULT``).
- ``Adjudicator`` (one): a presence socket on every packet it watches, the packet list and a
  packet's versions every 3 s.
- ``Maintainer`` (one): uploads ``LOAD_SUBMISSIONS`` submissions as one zip, starts a scoring
  run and follows it to the end (every 2 s); the run's wall time is recorded.
"""

from __future__ import annotations

import io
import json
import os
import random
import threading
import time
import zipfile
from pathlib import Path

import gevent
import websocket
from locust import HttpUser, between, events, task

PLAN = json.loads(Path(os.environ["LOAD_PLAN"]).read_text())
RESULT: dict = {"accepted": {}, "scoring": None, "socket_errors": 0, "socket_opens": 0, "status_5xx": 0}
_lock = threading.Lock()
_seats = iter(PLAN["annotators"])


def cookie_headers(seat: dict) -> dict:
    return {
        "Cookie": f"sessionid={seat['session']}; csrftoken={seat['csrf']}",
        "X-CSRFToken": seat["csrf"],
        "Referer": PLAN["host"] + "/",
    }


def open_socket(host: str, packet_id: int, seat: dict):
    url = host.replace("http://", "ws://") + f"/ws/packets/{packet_id}/"

    def run():
        while True:
            try:
                ws = websocket.create_connection(
                    url, header=[f"Cookie: sessionid={seat['session']}"], origin=host, timeout=30
                )
                RESULT["socket_opens"] += 1
                while True:
                    ws.recv()
            except Exception as error:  # noqa: BLE001 - counted, then reconnect like the page
                RESULT["socket_errors"] += 1
                RESULT.setdefault("socket_error_kinds", {}).setdefault(type(error).__name__, 0)
                RESULT["socket_error_kinds"][type(error).__name__] += 1
                gevent.sleep(1)

    return gevent.spawn(run)


class Annotator(HttpUser):
    weight = 100
    wait_time = between(1.5, 3.0)

    def on_start(self):
        self.seat = next(_seats)
        self.packet = self.seat["packet"]
        self.headers = cookie_headers(self.seat)
        self.socket = open_socket(self.host, self.packet, self.seat)
        self.uids: list[str] = []
        self.etag = None
        self.frame = 0
        self.reload()

    def on_stop(self):
        self.socket.kill()

    def _count(self, kind: str) -> None:
        with _lock:
            entry = RESULT["accepted"].setdefault(str(self.seat["ledger"]), {"add": 0, "edit": 0})
            entry[kind] += 1

    @task(1)
    def reload(self):
        with self.client.get(
            f"/api/packets/{self.packet}/ledger/", headers=self.headers, name="ledger GET", catch_response=True
        ) as response:
            if response.status_code == 200:
                self.etag = response.headers.get("ETag")
                self.uids = [e["uid"] for e in response.json().get("events", [])]
                response.success()
            else:
                response.failure(f"status {response.status_code}")

    def _save(self, method: str, path: str, name: str, kind: str):
        self.frame = (self.frame + 37) % (PLAN["frame_count"] - 20)
        body = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": self.frame, "end_frame": self.frame + 12}}
        with self.client.request(
            method,
            path,
            json=body,
            headers={**self.headers, "If-Match": self.etag or ""},
            name=name,
            catch_response=True,
        ) as response:
            if response.status_code in (200, 201):
                self.etag = response.headers.get("ETag")
                if kind == "add":
                    self.uids.append(response.json()["event"]["uid"])
                self._count(kind)
                response.success()
            elif response.status_code == 412:
                response.failure("stale version")  # never expected: one writer per ledger
                self.reload()
            else:
                response.failure(f"status {response.status_code}")

    @task(4)
    def autosave_new(self):
        self._save("POST", f"/api/packets/{self.packet}/ledger/events/", "save: new event", "add")

    @task(3)
    def autosave_edit(self):
        if not self.uids:
            return self.autosave_new()
        uid = random.choice(self.uids)
        self._save("PUT", f"/api/packets/{self.packet}/ledger/events/{uid}/", "save: edit", "edit")

    @task(1)
    def seek(self):
        self.client.get(f"/media/packets/{self.packet}/frames.json", headers=self.headers, name="seek: frames.json")

    @task(2)
    def range_read(self):
        offset = random.randrange(0, max(1, PLAN["proxy_size"] - 262144))
        with self.client.get(
            f"/media/packets/{self.packet}/proxy.mp4",
            name="proxy Range read",
            catch_response=True,
            headers={**self.headers, "Range": f"bytes={offset}-{offset + 262143}"},
        ) as response:
            if response.status_code == 206:
                response.success()
            else:
                response.failure(f"status {response.status_code}")


class Adjudicator(HttpUser):
    fixed_count = 1
    wait_time = between(2.5, 3.5)

    def on_start(self):
        seat = PLAN["adjudicator"]
        self.headers = cookie_headers(seat)
        self.sockets = [open_socket(self.host, p, seat) for p in PLAN["adjudicated_packets"]]

    def on_stop(self):
        for s in self.sockets:
            s.kill()

    @task
    def look(self):
        self.client.get("/api/packets/", headers=self.headers, name="adjudicator: packets")
        packet = random.choice(PLAN["adjudicated_packets"])
        self.client.get(f"/api/packets/{packet}/versions/", headers=self.headers, name="adjudicator: versions")


class Maintainer(HttpUser):
    fixed_count = 1
    wait_time = between(2, 2)

    def on_start(self):
        seat = PLAN["maintainer"]
        self.headers = cookie_headers(seat)
        self.run_url = None
        self.started = None
        solution = Path(PLAN["solution"]).read_bytes()
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            for n in range(PLAN["submissions"]):
                zf.writestr(f"s{n:04d}.solution.json", solution)
        packet = PLAN["scoring_packet"]
        response = self.client.post(
            f"/api/packets/{packet}/submissions/",
            files={"archive": ("b.zip", archive.getvalue())},
            headers=self.headers,
            name="maintainer: upload submissions",
        )
        if response.status_code != 201:
            return
        self.started = time.monotonic()
        run = self.client.post(
            f"/api/packets/{packet}/scoring-runs/",
            json={"tier": "provisional"},
            headers=self.headers,
            name="maintainer: start scoring run",
        )
        if run.status_code == 202:
            self.run_url = f"/api/scoring-runs/{run.json()['id']}/"

    @task
    def follow(self):
        if not self.run_url or RESULT["scoring"]:
            return
        response = self.client.get(self.run_url, headers=self.headers, name="maintainer: run progress")
        if response.status_code == 200:
            body = response.json()
            if body["job"]["status"] in ("done", "failed"):
                RESULT["scoring"] = {
                    "status": body["job"]["status"],
                    "counts": body["counts"],
                    "seconds": round(time.monotonic() - self.started, 1),
                }
            else:
                RESULT["scoring_progress"] = body["counts"]


@events.request.add_listener
def _count_5xx(response=None, **_):
    if response is not None and getattr(response, "status_code", 0) >= 500:
        RESULT["status_5xx"] += 1


@events.test_stop.add_listener
def _write_result(**_):
    Path(os.environ["LOAD_RESULT"]).write_text(json.dumps(RESULT))
