"""Fault drill: a Celery worker killed (SIGKILL) mid-ingest and mid-scoring, in the stack of
``bin/run-stack``. The stack starts the worker again; the unacknowledged message (acks_late)
is redelivered once the broker's visibility timeout passes; the job finishes with the right
progress and no result is stored twice."""

from __future__ import annotations

import io
import os
import signal
import zipfile

import pytest

from annotator.base.media import synthetic
from tests.deploy.stack import EGOCENTRIC_SOLUTION, run_stack, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

FRAMES = 3000
DRILL_ENV = {
    "CELERY_VISIBILITY_TIMEOUT": "6",  # redeliver a killed worker's task after 6 s (production: above the longest task)
    "CELERY_UNACKED_RESTORE_INTERVAL": "1",
    "FRAMELEDGER_INGEST_REMUX_FIRST": "0",  # one long ingest task, so that the kill lands inside it
    "FRAMELEDGER_INGEST_CHUNK_FRAMES": "0",
}


def kill_worker(stack, name: str) -> int:
    pid = stack.state()["processes"][name]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: stack.state()["processes"][name] != pid, 30, f"{name} to be started again")
    return pid


def received_ids(log: str, task: str) -> list[str]:
    return [
        line.split(f"{task}[", 1)[1].split("]", 1)[0]
        for line in log.splitlines()
        if f"Task {task}[" in line and "received" in line
    ]


def test_worker_killed_mid_ingest_and_mid_scoring(tmp_path):
    with run_stack(tmp_path, web_workers=1, extra_env=DRILL_ENV) as stack:
        maintainer = stack.session("maintainer")
        base = stack.base

        # --- ingest: kill the ingest worker while it encodes the proxy
        source = synthetic.write_video(tmp_path / "long.mp4", "h264-vfr-bframes", FRAMES)
        with open(source, "rb") as fh:
            response = maintainer.post(f"{base}/api/videos/", data={"title": "drill"}, files={"file": fh})
        assert response.status_code == 202, response.text
        job_id, video_id = response.json()["job"]["id"], response.json()["video"]["id"]
        wait_for(lambda: maintainer.get(f"{base}/api/jobs/{job_id}/").json()["status"] != "queued", 60, "running", 0.02)
        kill_worker(stack, "worker-ingest")
        job = wait_for(
            lambda: (j := maintainer.get(f"{base}/api/jobs/{job_id}/").json())["status"] in {"done", "failed"} and j,
            240,
            "the ingest to finish after the kill",
        )
        log = stack.log("worker-ingest")
        assert job["status"] == "done", (job, log[-4000:])
        assert job["progress"] == 1.0
        ids = received_ids(log, "annotator.ingest_video")
        assert ids.count(ids[-1]) == 2, ids  # the drill's message, delivered twice (the first: the demo video)
        video = maintainer.get(f"{base}/api/videos/{video_id}/").json()
        assert video["proxy_ready"] is True
        videos = [v for v in maintainer.get(f"{base}/api/videos/").json() if v["title"] == "drill"]
        assert len(videos) == 1
        media = maintainer.get(f"{base}/media/videos/{video_id}/proxy.mp4")
        proxy = tmp_path / "proxy.mp4"
        proxy.write_bytes(media.content)
        assert [i for _, i in synthetic.iter_decoded_indices(proxy)] == list(range(FRAMES))

        # --- scoring: kill the scoring worker in the middle of a run of 150 submissions
        packet_id = maintainer.get(f"{base}/api/packets/").json()[0]["id"]
        version = maintainer.get(f"{base}/api/packets/{packet_id}/versions/").json()[0]
        assert maintainer.post(f"{base}/api/versions/{version['id']}/ready/", json={}).status_code in {200, 201}
        solutions = sorted(EGOCENTRIC_SOLUTION.glob("*.solution.json"))
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            for n in range(150):
                zf.writestr(f"s{n:03d}.solution.json", solutions[n % len(solutions)].read_bytes())
        archive.seek(0)
        uploaded = maintainer.post(
            f"{base}/api/packets/{packet_id}/submissions/", files={"archive": ("batch.zip", archive)}
        )
        assert uploaded.status_code == 201, uploaded.text
        run = maintainer.post(f"{base}/api/packets/{packet_id}/scoring-runs/", json={"tier": "provisional"}).json()
        run_url = f"{base}/api/scoring-runs/{run['id']}/"
        wait_for(lambda: maintainer.get(run_url).json()["counts"]["scored"] > 0, 60, "the first scores", 0.1)
        partial = maintainer.get(run_url).json()
        kill_worker(stack, "worker-scoring")
        body = wait_for(
            lambda: (b := maintainer.get(run_url).json())["job"]["status"] in {"done", "failed"} and b,
            240,
            "the scoring run to finish after the kill",
        )
        assert partial["counts"]["scored"] < 150, partial  # the kill landed mid-run
        assert body["job"]["status"] == "done", (body["job"], stack.log("worker-scoring")[-4000:])
        assert body["counts"] == {"pending": 0, "scored": 150, "error": 0}
        assert body["job"]["progress"] == 1.0 and body["job"]["message"] == "150 of 150 scored"
        scores = maintainer.get(f"{run_url}scores/", params={"page_size": 1000}).json()["results"]
        assert len(scores) == 150 and len({s["submission"] for s in scores}) == 150  # one score per submission
        assert stack.state()["restarts"] == {"worker-ingest": 1, "worker-scoring": 1}
