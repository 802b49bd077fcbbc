"""The browser side of the multi-host drill, run inside the client host's namespace
(``deploy/multihost.py``): talks to the installation only through the nginx host's address.

    python -m deploy.multihost_client upload BASE PASSWORDS.json VIDEO    # prints JSON
    python -m deploy.multihost_client save BASE PASSWORDS.json            # prints JSON
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


def upload(base: str, passwords: dict, video: str, wait: float = 600) -> dict:
    s = session(base, "maintainer", passwords["maintainer"])
    started = time.monotonic()
    with open(video, "rb") as fh:
        response = s.post(f"{base}/api/videos/", data={"title": "multihost"}, files={"file": fh}, timeout=300)
    if response.status_code != 202:
        raise SystemExit(f"upload refused: {response.status_code} {response.text[:500]}")
    uploaded = time.monotonic()
    job_id, video_id = response.json()["job"]["id"], response.json()["video"]["id"]
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        job = s.get(f"{base}/api/jobs/{job_id}/", timeout=30).json()
        if job["status"] in {"done", "failed"}:
            break
        time.sleep(0.5)
    done = time.monotonic()
    media = s.get(f"{base}/media/videos/{video_id}/proxy.mp4", headers={"Range": "bytes=0-99"}, timeout=30)
    return {
        "job": job,
        "video": video_id,
        "upload_seconds": round(uploaded - started, 2),
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


def main() -> None:
    mode, base, passwords = sys.argv[1], sys.argv[2], json.loads(open(sys.argv[3]).read())
    result = upload(base, passwords, sys.argv[4]) if mode == "upload" else save(base, passwords)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
