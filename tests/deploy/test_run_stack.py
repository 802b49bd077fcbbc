"""CI smoke test of ``bin/run-stack``: the production topology on one machine starts, serves a
page, static files, media ranges and a websocket through nginx, ingests a video on the ingest
queue, scores a submission on the scoring queue, and stops cleanly on SIGTERM.

It runs in ``bin/test``'s PostgreSQL + Redis pass (skipped without ``DATABASE_URL`` on
PostgreSQL and ``REDIS_URL``)."""

from __future__ import annotations

import json
import os
import shutil
import signal

import pytest
import requests
from websockets.sync.client import connect

from annotator.base.media import synthetic
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.deploy.stack import EGOCENTRIC_SOLUTION, run_stack, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


def packet_socket(stack, session, packet_id: int):
    cookie = "; ".join(f"{k}={v}" for k, v in session.cookies.items())
    return connect(
        f"ws://127.0.0.1:{stack.port}/ws/packets/{packet_id}/",
        additional_headers={"Cookie": cookie, "Origin": stack.base},
        open_timeout=20,
    )


def sign_in_with_chromium(stack, username: str) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing (bin/test installs it when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(f"{stack.base}/login/")
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", stack.passwords[username])
            with page.expect_navigation():
                page.click("button[type=submit], input[type=submit]")
            assert "CSRF" not in page.content(), page.content()[:2000]
            assert page.url.rstrip("/") == stack.base, page.url
            assert username in page.content()
        finally:
            browser.close()


def test_run_stack_serves_ingests_scores_and_stops_cleanly(tmp_path):
    if not shutil.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
        pytest.fail("nginx is missing (bin/test installs it when run as root)")
    with run_stack(tmp_path) as stack:
        state = stack.state()
        assert {"web", "nginx", "worker-default", "worker-ingest", "worker-scoring", "worker-retrieval",
                "worker-bundles"} <= set(state["processes"])  # fmt: skip

        # health, readiness and metrics through nginx
        maintainer = stack.session("maintainer")
        assert maintainer.get(f"{stack.base}/healthz").json() == {"status": "ok"}
        ready = maintainer.get(f"{stack.base}/readyz")
        assert ready.status_code == 200 and ready.json()["ready"] is True
        page = maintainer.get(f"{stack.base}/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        css = [line for line in page.text.split('"') if line.startswith("/static/") and line.endswith(".css")]
        assert css, page.text[:2000]
        static = maintainer.get(stack.base + css[0])
        assert static.status_code == 200 and "Cache-Control" in static.headers  # nginx's expires

        # a real browser signs in through nginx on this non-80 port (its POST carries
        # Origin: http://127.0.0.1:<port>, which Django checks against the forwarded Host)
        sign_in_with_chromium(stack, "annotator_b")

        # a websocket through nginx: presence arrives
        annotator = stack.session("annotator_a")
        packet_id = maintainer.get(f"{stack.base}/api/packets/").json()[0]["id"]
        with packet_socket(stack, annotator, packet_id) as socket:
            message = json.loads(socket.recv(timeout=20))
            assert message["type"] == "presence"
            assert [p["username"] for p in message["people"]] == ["annotator_a"]

        # ingest a small generated video on the ingest queue
        source = synthetic.write_video(tmp_path / "clip.mp4", "h264-vfr-bframes", 120)
        with open(source, "rb") as fh:
            response = maintainer.post(f"{stack.base}/api/videos/", data={"title": "smoke"}, files={"file": fh})
        assert response.status_code == 202, response.text
        job_id, video_id = response.json()["job"]["id"], response.json()["video"]["id"]
        job = wait_for(
            lambda: (
                (j := maintainer.get(f"{stack.base}/api/jobs/{job_id}/").json())["status"] in {"done", "failed"} and j
            ),
            180,
            "the ingest job",
        )
        assert job["status"] == "done", (job, stack.log("worker-ingest")[-3000:])
        assert "annotator.ingest_video[" in stack.log("worker-ingest")
        assert "annotator.ingest_video[" not in stack.log("worker-default")

        # the proxy through X-Accel-Redirect: nginx answers the Range request
        media = maintainer.get(f"{stack.base}/media/videos/{video_id}/proxy.mp4", headers={"Range": "bytes=0-99"})
        assert media.status_code == 206, media.headers
        assert media.headers["Content-Range"].startswith("bytes 0-99/") and len(media.content) == 100
        assert media.content[4:8] == b"ftyp" and "X-Accel-Redirect" not in media.headers
        # the internal location answers only X-Accel-Redirect, never a client (no access check there)
        assert maintainer.get(f"{stack.base}/_media/").status_code == 404
        assert requests.get(f"{stack.base}/media/videos/{video_id}/proxy.mp4", timeout=10).status_code == 404

        # score a submission on the scoring queue
        version = maintainer.get(f"{stack.base}/api/packets/{packet_id}/versions/").json()[0]
        ready = maintainer.post(f"{stack.base}/api/versions/{version['id']}/ready/", json={})
        assert ready.status_code in {200, 201}, ready.text
        solution = sorted(EGOCENTRIC_SOLUTION.glob("*.solution.json"))[0]
        with open(solution, "rb") as fh:
            uploaded = maintainer.post(f"{stack.base}/api/packets/{packet_id}/submissions/", files={"file": fh})
        assert uploaded.status_code == 201, uploaded.text
        run = maintainer.post(f"{stack.base}/api/packets/{packet_id}/scoring-runs/", json={"tier": "provisional"})
        assert run.status_code == 202, run.text
        body = wait_for(
            lambda: (
                (b := maintainer.get(f"{stack.base}/api/scoring-runs/{run.json()['id']}/").json())["job"]["status"]
                in {"done", "failed"}
                and b
            ),
            120,
            "the scoring run",
        )
        assert body["job"]["status"] == "done" and body["counts"] == {"pending": 0, "scored": 1, "error": 0}, body
        assert "annotator.score_batch[" in stack.log("worker-scoring")

        # metrics: request latency by route, task durations from the workers, queue depth
        metrics = maintainer.get(f"{stack.base}/metrics").text
        assert 'route="/api/jobs/<id:job_id>/"' in metrics
        assert 'frameledger_task_duration_seconds_count{outcome="success",task="annotator.score_batch"}' in metrics
        assert f'frameledger_queue_depth{{queue="{stack.env["FRAMELEDGER_SCORING_QUEUE"]}"}} 0.0' in metrics

        # a clean stop
        pids = list(stack.state()["processes"].values())
        stack.process.send_signal(signal.SIGTERM)
        assert stack.process.wait(timeout=60) == 0
        assert "FrameLedger stack stopped" in stack.output.read_text()
        assert "killed" not in stack.output.read_text()
        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
