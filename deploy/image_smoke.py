"""The protocol through the image's services (``python -m deploy.image smoke``): every request goes
through the nginx container on 127.0.0.1, every job runs in a worker container.

Steps, each recorded with its result: the demo data seeded by ``manage.py seed_demo`` in the web
container; a video uploaded over tus in pieces and ingested on the ingest worker; two annotators
each save events and freeze; the adjudicator builds the union, decides the item only B has and
publishes; the version exported (``gt.json``); a submission scored on the scoring worker; the
reference bundle run on the bundles worker inside its container (bubblewrap, cgroups); the user
each service runs as (``id``); ``verify_integrity`` at the end.
"""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import requests

from deploy.multihost_client import bundle, score, session, wait_job

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "data/agentic-vbench/egocentric-activity-understanding/calibration/rollouts"
ATTESTATION = "I labelled this video alone, from the picture, without seeing the other ledger."


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def tus_upload(s: requests.Session, base: str, path: Path, piece: int = 1 << 20) -> dict:
    data = path.read_bytes()
    tus = {"Tus-Resumable": "1.0.0"}
    created = s.post(
        f"{base}/api/uploads/",
        headers={**tus, "Upload-Length": str(len(data)),
                 "Upload-Metadata": f"filename {b64(path.name)},title {b64('image smoke')}"},
        timeout=30,
    )  # fmt: skip
    assert created.status_code == 201, (created.status_code, created.text[:300])
    url = base + created.headers["Location"]
    for offset in range(0, len(data), piece):
        sent = s.patch(
            url,
            data=data[offset : offset + piece],
            headers={**tus, "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream"},
            timeout=60,
        )
        assert sent.status_code == 204, (sent.status_code, sent.text[:300])
    return s.get(url, headers=tus, timeout=30).json()


def annotate_and_freeze(base: str, passwords: dict, who: str, events: list[dict]) -> dict:
    s = session(base, who, passwords[who])
    packet = s.get(f"{base}/api/packets/", timeout=30).json()[0]["id"]
    for data in events:
        ledger = s.get(f"{base}/api/packets/{packet}/ledger/", timeout=30)
        saved = s.post(
            f"{base}/api/packets/{packet}/ledger/events/",
            json={"data": data},
            headers={"If-Match": ledger.headers.get("ETag", "")},
            timeout=30,
        )
        assert saved.status_code == 201, (who, saved.status_code, saved.text[:300])
    version = s.get(f"{base}/api/packets/{packet}/ledger/", timeout=30).json()["version"]
    frozen = s.post(
        f"{base}/api/packets/{packet}/ledger/freeze/",
        json={"attestation": ATTESTATION, "version": version},
        timeout=30,
    )
    assert frozen.status_code in (200, 201), (who, frozen.status_code, frozen.text[:300])
    return {"packet": packet, "events": len(events), "sha256": frozen.json().get("sha256")}


def adjudicate_and_publish(base: str, passwords: dict, packet: int) -> dict:
    s = session(base, "adjudicator", passwords["adjudicator"])
    union = s.post(f"{base}/api/packets/{packet}/union/", json={}, timeout=60)
    assert union.status_code in (200, 201), (union.status_code, union.text[:300])
    items, url = [], f"{base}/api/packets/{packet}/union/"
    while url:  # a page of items at a time
        page = s.get(url, timeout=30).json()
        items, url = items + page["items"], page["next"]
    decided = []
    for item in items:
        if item["status"] == "agreed":
            continue
        action = "take_b" if item["b_value"] is not None else "take_a"
        answer = s.post(
            f"{base}/api/packets/{packet}/union/items/{item['position']}/decision/",
            json={"action": action, "rationale": "The picture shows this action over these frames.", "replaces": None},
            timeout=30,
        )
        assert answer.status_code in (200, 201), (answer.status_code, answer.text[:300])
        decided.append(action)
    published = s.post(f"{base}/api/packets/{packet}/publish/", json={}, timeout=60)
    assert published.status_code == 201, (published.status_code, published.text[:300])
    version = published.json()
    export = s.get(f"{base}/api/versions/{version['id']}/export/", timeout=60)
    assert export.status_code == 200, (export.status_code, export.text[:300])
    archive = zipfile.ZipFile(io.BytesIO(export.content))
    names = archive.namelist()
    gt = json.loads(archive.read(next(n for n in names if n.rsplit("/", 1)[-1] == "gt.json")))
    return {
        "items": len(items),
        "decisions": decided,
        "version": version.get("label"),
        "export_files": sorted(names),
        "gt.json": gt if len(json.dumps(gt)) < 600 else f"{len(json.dumps(gt))} bytes",
    }


def host_manage_env(drill) -> dict:
    """This machine's .venv talking to the image's database and media (to write test data)."""
    import os

    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))},
        "DJANGO_SETTINGS_MODULE": "deploy.settings",
        "DJANGO_SECRET_KEY_FILE": str(drill.state / "django_secret_key"),
        "FRAMELEDGER_SIGNING_KEY_FILE": str(drill.state / "frameledger_signing_key"),
        "DATABASE_URL": drill.database_url,
        "REDIS_URL": drill.redis_url,
        "FRAMELEDGER_MEDIA_ROOT": str(drill.state / "media"),
        "FRAMELEDGER_VAR_DIR": str(drill.state / "host-var"),
    }


def smoke(drill) -> dict:
    from annotator.base.media import synthetic
    from deploy.multihost import MOMENT_VERSION

    base, steps = drill.base, {}
    started = time.monotonic()

    def step(name: str, result) -> None:
        steps[name] = result
        print(f"[smoke] {name}: {json.dumps(result)[:400]}", file=sys.stderr, flush=True)

    seeded = drill.exec("web", ".venv/bin/python", "manage.py", "seed_demo")
    passwords = dict(re.findall(r"^\s+(\w+)\s+(\S+)$", seeded, re.M))
    step("seed_demo", {"accounts": sorted(passwords)})

    maintainer = session(base, "maintainer", passwords["maintainer"])
    video = synthetic.write_video(drill.state / "smoke.mp4", "h264-2997-gop12", 240, width=320, height=180)
    upload = tus_upload(maintainer, base, video)
    assert upload["complete"] and upload["job"], upload
    job = wait_job(maintainer, base, upload["job"]["id"], 300)
    video_id = upload["video"]["id"] if isinstance(upload["video"], dict) else upload["video"]
    media = maintainer.get(f"{base}/media/videos/{video_id}/proxy.mp4", headers={"Range": "bytes=0-99"})
    step("tus upload and ingest", {"job": job["status"], "range": media.status_code,
                                   "worker-ingest ran": drill.tasks("worker-ingest")})  # fmt: skip

    a = annotate_and_freeze(base, passwords, "annotator_a", [
        {"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 160}])  # fmt: skip
    b = annotate_and_freeze(base, passwords, "annotator_b", [
        {"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 160},
        {"verb": "open", "nouns": ["fridge"], "start_frame": 400, "end_frame": 480}])  # fmt: skip
    step("annotate and freeze", {"A": a, "B": b})
    step("union, decide, publish, export", adjudicate_and_publish(base, passwords, a["packet"]))

    # the provisional version can be marked ready once its calibration (a task) has run
    provisional = maintainer.get(f"{base}/api/packets/{a['packet']}/versions/", timeout=30).json()
    provisional = next(v for v in provisional if v["tier"] == "provisional")
    deadline = time.monotonic() + 180
    while (ready := maintainer.post(f"{base}/api/versions/{provisional['id']}/ready/", json={})).status_code not in (
        200,
        201,
    ):
        assert time.monotonic() < deadline, (ready.status_code, ready.text[:300])
        time.sleep(2)
    solution = sorted(SOLUTION.glob("*.solution.json"))[0]
    scored = score(base, passwords, str(solution))
    scored["worker-scoring ran"] = drill.tasks("worker-scoring")
    step("score a submission", scored)

    moment = subprocess.run(
        [sys.executable, "-c", MOMENT_VERSION], cwd=ROOT, env=host_manage_env(drill), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert moment.returncode == 0, moment.stderr[-2000:]
    version = json.loads(moment.stdout.strip().splitlines()[-1])["version"]
    ran = bundle(base, passwords, version, wait=600)
    worker_log = drill.logs("worker-bundles")
    step("reference bundle", {**{k: ran[k] for k in ("status", "outcome", "reward", "queue", "seconds")},
                              "enforcement": ran["enforcement"],
                              "worker-bundles ran": drill.tasks("worker-bundles")})  # fmt: skip
    if ran["status"] != "done":
        steps["reference bundle"]["stderr_tail"] = ran["stderr_tail"]
        steps["reference bundle"]["worker_log_tail"] = worker_log[-3000:]

    step("users", {name: drill.exec(name, "id", "-un").strip() for name in drill.states() if name != "migrate"})
    verified = drill.exec("web", ".venv/bin/python", "manage.py", "verify_integrity").strip()
    step("verify_integrity", [line for line in verified.splitlines() if "verified" in line or "problem" in line])
    ok = (
        any("all verified" in line for line in steps["verify_integrity"])
        and job["status"] == "done"
        and scored["status"] == "done"
        and ran["status"] == "done"
        and all(state == "running" for state in drill.states().values())
    )
    return {"ok": ok, "seconds": round(time.monotonic() - started, 1), "steps": steps}
