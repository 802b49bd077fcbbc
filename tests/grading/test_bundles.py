"""Executable moment-search bundles graded through the real queue: the repository's
reference system (``annotator/base/bundles/reference``) and a deliberately broken bundle, each
run by a Celery worker process in the sandbox, scored against the pinned version and shown
on the leaderboard with stage timings and logs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from annotator.actions.versions import do_import_provisional_version
from annotator.base.grading import sandbox
from annotator.models import BundleRun, Submission, VersionCalibration
from retrieval.synthetic import SyntheticConfig, generate_corpus
from scoring import score_submission
from tests.factories import after_commit, client_for, make_packet, make_ready_video
from tests.grading.sandbox_helpers import needs_sandbox

DURATION = 120.0  # 2,880 frames at 24 fps; the moment-query kind's grid step is 2 s


def snap(value: float) -> float:
    return float(round(value / 2.0) * 2.0)


def synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, media_root: Path):
    """A moment packet whose video has synthetic CLIP-like features with known answers."""
    config = SyntheticConfig(
        n_videos=1, min_duration=DURATION, max_duration=DURATION, queries_per_video=(3, 3),
        grid_steps=(2.0,), explicit_grid_share=0.0, clip_lengths=(2.0,), seed=5,
    )  # fmt: skip
    corpus = generate_corpus(config)
    video = corpus.videos[0]
    features = media_root / "features" / "synthetic.npz"
    features.parent.mkdir(parents=True, exist_ok=True)
    np.savez(features, features=video.features.astype("float16"))
    packet = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
        video=make_ready_video("synthetic moments", frame_count=2880, fps=(24, 1)),
        parameters={"features": "features/synthetic.npz", "clip_length": 2.0},
    )  # fmt: skip
    queries = []
    for q in corpus.queries:
        start, end = snap(q["intervals"][0][0]), snap(q["intervals"][0][1])
        queries.append(
            {"query_id": q["query_id"], "query": q["description"], "intervals": [[start, max(end, start + 2)]]}
        )
    with after_commit():  # the anchors (the reference rows) are computed once the import commits
        version = do_import_provisional_version(
            packet, queries, actor=maintainer, source="synthetic", source_sha256="5" * 64
        )
    return version, features


def broken_bundle() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("build.sh", "#!/bin/sh\necho 'cannot find my model weights' >&2\nexit 3\n")
        archive.writestr("run.sh", "#!/bin/sh\nexit 0\n")
    return buffer.getvalue()


def wait_for(client, run_ids, process, log, seconds=300):
    deadline = time.monotonic() + seconds
    bodies = {}
    while time.monotonic() < deadline:
        responses = {i: client.get(f"/api/bundle-runs/{i}/") for i in run_ids}
        refused = {i: r.content[:600] for i, r in responses.items() if r.status_code != 200}
        assert not refused, f"a run's page was refused while it ran: {refused}"
        bodies = {i: r.json() for i, r in responses.items()}
        if all(b["status"] in {"done", "error"} for b in bodies.values()):
            return bodies
        assert process.poll() is None, Path(log).read_text()[-3000:]
        time.sleep(1)
    raise AssertionError(f"bundle runs did not finish: {bodies}\n{Path(log).read_text()[-3000:]}")


@needs_sandbox
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_reference_bundle_and_a_broken_one_are_graded_through_the_queue(
    worker, settings, tmp_path, maintainer, annotator_a, annotator_b, adjudicator
):
    process, log = worker
    from deploy.celery import app

    settings.FRAMELEDGER_BUNDLE_QUEUE = app.conf.task_default_queue  # the queue the test worker takes
    if connection.vendor == "sqlite":
        os.chmod(connection.settings_dict["NAME"], 0o600)  # the sandbox must not read the database
    version, features = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    client = client_for(maintainer)
    url = f"/api/versions/{version.pk}/bundles/"
    reference = client.post(url, {"reference": "true"}, format="multipart")
    assert reference.status_code == 202, reference.json()
    assert reference.json()["queue"] == settings.FRAMELEDGER_BUNDLE_QUEUE
    assert reference.json()["limits"]["build_seconds"] == 3600 and reference.json()["limits"]["call_seconds"] == 2700
    upload = io.BytesIO(broken_bundle())
    upload.name = "broken.zip"
    broken = client.post(url, {"bundle": upload, "label": "broken"}, format="multipart")
    assert broken.status_code == 202, broken.json()
    bodies = wait_for(client, [reference.json()["id"], broken.json()["id"]], process, log)
    ref, bad = bodies[reference.json()["id"]], bodies[broken.json()["id"]]
    assert ref["status"] == "done" and ref["outcome"] == "ok", ref
    assert [s["name"] for s in ref["stages"]] == ["build", "call-1"] and ref["stages"][1]["rows"] == 3
    assert ref["enforcement"]["network"].startswith("new network namespace")
    assert ref["enforcement"]["user"] in sandbox.DEFAULT_UIDS and ref["enforcement"]["sandbox"].startswith("bubblewrap")
    assert bad["status"] == "done" and bad["outcome"].startswith("build exited with 3"), bad
    assert "cannot find my model weights" in bad["stages"][0]["stderr"] and len(bad["stages"]) == 1
    assert bad["reward"] == 0.0

    # The rows scored are the ones the library writes outside the sandbox, and the
    # stored reward is the scorer's for those rows against the version's ground truth.
    rows = bytes(Submission.objects.get(pk=ref["submission"]).content)
    assert rows == library_rows(tmp_path, version, features)
    gt = json.loads(client.get(f"/api/versions/{version.pk}/export/?file=gt.json").content)
    params = {"corpus": [{"video_id": f"video-{version.packet.video_id}", "duration": DURATION, "grid": {"step": 2.0}}]}
    assert ref["reward"] == score_submission("moment-utility-v1", gt, rows, **params).reward > 0
    # The same system as the version's calibration row, in or out of the sandbox.
    anchors = {a["name"]: a["reward"] for a in VersionCalibration.objects.get(version=version).anchors}
    assert anchors["retrieval_zero_shot"] == ref["reward"]

    board = client.get(f"/api/versions/{version.pk}/leaderboard/").json()
    first, second = board["rows"][:2]
    assert (first["label"], first["kind"], first["rank"], first["reference"]) == (
        "reference/retrieval-zero-shot", "bundle", 1, True,
    )  # fmt: skip
    assert set(first["stage_seconds"]) == {"build", "call-1"} and first["stage_seconds"]["build"] > 0
    assert (second["label"], second["reward"], second["kind"]) == ("broken", 0.0, "bundle")
    assert second["outcome"].startswith("build exited with 3")
    assert BundleRun.objects.count() == 2


def library_rows(tmp_path: Path, version, features: Path) -> bytes:
    """``python -m retrieval build|run`` on the same corpus and requests, unsandboxed."""
    from annotator.actions.bundles import bundle_inputs

    records, files, requests = bundle_inputs(version)
    corpus = tmp_path / "corpus"
    for name, source in files.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_bytes(source.read_bytes())
    (corpus / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    index, out = tmp_path / "index", tmp_path / "rows.jsonl"
    base = [sys.executable, "-m", "retrieval"]
    subprocess.run(
        [*base, "build", "--corpus", corpus, "--index-dir", index, "--encoder", "hash", "--threads", "1"], check=True
    )
    subprocess.run([*base, "run", "--index-dir", index, "--queries", tmp_path / "q.jsonl", "--output", out], check=True)
    return out.read_bytes()


@pytest.mark.django_db
def test_bundles_are_for_maintainers_and_bad_zips_are_refused(
    maintainer, annotator_a, annotator_b, adjudicator, tmp_path
):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, tmp_path)
    url = f"/api/versions/{version.pk}/bundles/"
    for user in (annotator_a, adjudicator):
        assert client_for(user).post(url, {"reference": "true"}, format="multipart").status_code == 404
        assert client_for(user).get(url).status_code == 404
    client = client_for(maintainer)
    upload = io.BytesIO(b"not a zip")
    upload.name = "x.zip"
    response = client.post(url, {"bundle": upload}, format="multipart")
    assert response.status_code == 400 and "not a zip" in json.dumps(response.json())
    assert client.post(url, {}, format="multipart").status_code == 400
    assert BundleRun.objects.count() == 0
    cuda = client.post(url, {"reference": "true", "device": "cuda"}, format="multipart").json()
    assert cuda["queue"] == "gpu" and cuda["limits"]["address_space_bytes"] == 0 and cuda["status"] == "queued"
    cpu = client.post(url, {"reference": "true"}, format="multipart").json()
    assert cpu["queue"] == "frameledger-bundles" and cpu["limits"]["address_space_bytes"] == 32 * 1024**3
    assert client.post(url, {"reference": "true", "device": "tpu"}, format="multipart").status_code == 400


@pytest.fixture
def no_bwrap(monkeypatch):
    """The worker started after this finds no bwrap where the setting says."""
    monkeypatch.setenv("FRAMELEDGER_SANDBOX_BWRAP", "/nonexistent/bwrap")


@needs_sandbox
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_without_bwrap_refuses_bundle_runs_and_never_runs_them_unsandboxed(
    no_bwrap, worker, settings, tmp_path, maintainer, annotator_a, annotator_b, adjudicator
):
    process, log = worker
    from deploy.celery import app

    settings.FRAMELEDGER_BUNDLE_QUEUE = app.conf.task_default_queue
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    marker = tmp_path / "ran-unsandboxed"
    os.chmod(tmp_path, 0o777)
    upload = io.BytesIO(zip_of({"build.sh": f"#!/bin/sh\ntouch {marker}\n", "run.sh": f"#!/bin/sh\ntouch {marker}\n"}))
    upload.name = "b.zip"
    client = client_for(maintainer)
    created = client.post(f"/api/versions/{version.pk}/bundles/", {"bundle": upload, "label": "b"}, format="multipart")
    body = wait_for(client, [created.json()["id"]], process, log)[created.json()["id"]]
    assert body["status"] == "error" and "bubblewrap" in body["outcome"] and "never run unsandboxed" in body["outcome"]
    assert body["stages"] == [] and body["submission"] is None and not marker.exists()


def zip_of(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            archive.writestr(info, text)
    return buffer.getvalue()
