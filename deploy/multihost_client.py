"""The browser side of the multi-host drill, run inside the client host's namespace
(``deploy/multihost.py``): talks to the installation only through the nginx host's address.

    python -m deploy.multihost_client upload BASE PASSWORDS.json VIDEO    # prints JSON
    python -m deploy.multihost_client save BASE PASSWORDS.json            # prints JSON
    python -m deploy.multihost_client start BASE PASSWORDS.json VIDEO     # upload, do not wait
    python -m deploy.multihost_client wait BASE PASSWORDS.json JOB
    python -m deploy.multihost_client score BASE PASSWORDS.json SOLUTION
    python -m deploy.multihost_client bundle BASE PASSWORDS.json VERSION  # the reference bundle
"""

from __future__ import annotations

import json
import sys
import time

import requests


def session(base: str, username: str, password: str) -> requests.Session:
    s = requests.Session()
    s.get(f"{base}/login/", timeout=30).raise_for_status()
    response = s.post(
        f"{base}/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": s.cookies["csrftoken"]},
        headers={"Referer": f"{base}/login/"},
        timeout=30,
        allow_redirects=False,
    )
    if response.status_code != 302:
        raise SystemExit(f"login of {username} failed: {response.status_code} {response.text[:300]}")
    s.headers.update({"X-CSRFToken": s.cookies["csrftoken"], "Referer": f"{base}/"})
    return s


def start(base: str, passwords: dict, video: str) -> dict:
    s = session(base, "maintainer", passwords["maintainer"])
    started = time.monotonic()
    with open(video, "rb") as fh:
        response = s.post(f"{base}/api/videos/", data={"title": "multihost"}, files={"file": fh}, timeout=300)
    if response.status_code != 202:
        raise SystemExit(f"upload refused: {response.status_code} {response.text[:500]}")
    body = response.json()
    return {
        "job": body["job"]["id"],
        "video": body["video"]["id"],
        "upload_seconds": round(time.monotonic() - started, 2),
    }


def wait_job(s: requests.Session, base: str, job_id: int, wait: float) -> dict:
    deadline = time.monotonic() + wait
    while True:
        job = s.get(f"{base}/api/jobs/{job_id}/", timeout=30).json()
        if job["status"] in {"done", "failed"} or time.monotonic() > deadline:
            return job
        time.sleep(0.25)


def upload(base: str, passwords: dict, video: str, wait: float = 600) -> dict:
    started = start(base, passwords, video)
    s = session(base, "maintainer", passwords["maintainer"])
    uploaded = time.monotonic()
    job_id, video_id = started["job"], started["video"]
    job = wait_job(s, base, job_id, wait)
    done = time.monotonic()
    media = s.get(f"{base}/media/videos/{video_id}/proxy.mp4", headers={"Range": "bytes=0-99"}, timeout=30)
    return {
        "job": job,
        "video": video_id,
        "upload_seconds": started["upload_seconds"],
        "ingest_seconds": round(done - uploaded, 2),
        "range_status": media.status_code,
        "range_ftyp": media.content[4:8] == b"ftyp",
    }


def save(base: str, passwords: dict) -> dict:
    s = session(base, "annotator_a", passwords["annotator_a"])
    packet = s.get(f"{base}/api/packets/", timeout=30).json()[0]["id"]
    ledger = s.get(f"{base}/api/packets/{packet}/ledger/", timeout=30)
    body = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 22}}
    saved = s.post(
        f"{base}/api/packets/{packet}/ledger/events/",
        json=body,
        headers={"If-Match": ledger.headers.get("ETag", "")},
        timeout=30,
    )
    again = s.get(f"{base}/api/packets/{packet}/ledger/", timeout=30).json()
    uid = saved.json().get("event", {}).get("uid") if saved.status_code in (200, 201) else None
    return {
        "packet": packet,
        "status": saved.status_code,
        "body": saved.text[:500],
        "uid": uid,
        "stored": any(e["uid"] == uid for e in again.get("events", [])),
    }


def score(base: str, passwords: dict, solution: str) -> dict:
    s = session(base, "maintainer", passwords["maintainer"])
    packet = s.get(f"{base}/api/packets/", timeout=30).json()[0]["id"]
    version = s.get(f"{base}/api/packets/{packet}/versions/", timeout=30).json()[0]
    s.post(f"{base}/api/versions/{version['id']}/ready/", json={}, timeout=30)
    with open(solution, "rb") as fh:
        uploaded = s.post(f"{base}/api/packets/{packet}/submissions/", files={"file": fh}, timeout=60)
    if uploaded.status_code != 201:
        raise SystemExit(f"submission refused: {uploaded.status_code} {uploaded.text[:500]}")
    started = time.monotonic()
    run = s.post(f"{base}/api/packets/{packet}/scoring-runs/", json={"tier": "provisional"}, timeout=30)
    if run.status_code != 202:
        raise SystemExit(f"scoring run refused: {run.status_code} {run.text[:500]}")
    while True:
        body = s.get(f"{base}/api/scoring-runs/{run.json()['id']}/", timeout=30).json()
        if body["job"]["status"] in {"done", "failed"} or time.monotonic() - started > 300:
            break
        time.sleep(0.5)
    return {
        "status": body["job"]["status"],
        "counts": body.get("counts"),
        "seconds": round(time.monotonic() - started, 2),
    }


def bundle(base: str, passwords: dict, version: int, wait: float = 600) -> dict:
    """The repository's reference bundle submitted to a moment version, waited on to its end."""
    s = session(base, "maintainer", passwords["maintainer"])
    started = time.monotonic()
    queued = s.post(f"{base}/api/versions/{version}/bundles/", data={"reference": "true"}, timeout=60)
    if queued.status_code != 202:
        raise SystemExit(f"bundle refused: {queued.status_code} {queued.text[:500]}")
    run_id = queued.json()["id"]
    while True:
        body = s.get(f"{base}/api/bundle-runs/{run_id}/", timeout=30).json()
        if body["status"] in {"done", "error"} or time.monotonic() - started > wait:
            break
        time.sleep(0.5)
    stages = [{k: v for k, v in stage.items() if k not in ("stdout", "stderr")} for stage in body["stages"]]
    return {
        "run": run_id,
        "queue": body["queue"],
        "status": body["status"],
        "outcome": body["outcome"],
        "reward": body["reward"],
        "stages": stages,
        "enforcement": body["enforcement"],
        "stderr_tail": [stage.get("stderr", "")[-500:] for stage in body["stages"]],
        "seconds": round(time.monotonic() - started, 2),
    }


def main() -> None:
    mode, base, passwords = sys.argv[1], sys.argv[2], json.loads(open(sys.argv[3]).read())
    if mode == "upload":
        result = upload(base, passwords, sys.argv[4])
    elif mode == "start":
        result = start(base, passwords, sys.argv[4])
    elif mode == "wait":
        s = session(base, "maintainer", passwords["maintainer"])
        result = wait_job(s, base, int(sys.argv[4]), float(sys.argv[5]) if len(sys.argv) > 5 else 600)
    elif mode == "bundle":
        result = bundle(base, passwords, int(sys.argv[4]))
    elif mode == "score":
        result = score(base, passwords, sys.argv[4])
    else:
        result = save(base, passwords)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
