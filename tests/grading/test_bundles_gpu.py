"""The reference bundle asked for with ``device=cuda``: routed to the GPU queue, run there by a
Celery worker in the sandbox with the host's NVIDIA device nodes, its search on CUDA inside the
stage, and scored like the CPU run. Runs where a CUDA device exists (``bench/gpu_check.sh``
runs it on a lent GPU machine); skipped with the reason elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from django.db import connection

from annotator.base.grading import sandbox_root
from scoring import score_submission
from tests.factories import client_for
from tests.grading.sandbox_helpers import needs_sandbox
from tests.grading.test_bundles import DURATION, library_rows, synthetic_version, wait_for

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.slow,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="torch.cuda.is_available() is false"),
    pytest.mark.skipif(not sandbox_root.nvidia_devices(), reason="no /dev/nvidia* device nodes"),
]


@needs_sandbox
@pytest.mark.django_db(transaction=True)
def test_the_reference_bundle_on_the_gpu_queue_searches_on_cuda_inside_the_sandbox(
    worker, settings, tmp_path, monkeypatch, maintainer, annotator_a, annotator_b, adjudicator
):
    process, log = worker
    from deploy.celery import app

    settings.FRAMELEDGER_BUNDLE_GPU_QUEUE = app.conf.task_default_queue  # the queue the test worker takes
    if connection.vendor == "sqlite":
        os.chmod(connection.settings_dict["NAME"], 0o600)
    version, features = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    client = client_for(maintainer)
    asked = client.post(f"/api/versions/{version.pk}/bundles/", {"reference": "true", "device": "cuda"})
    assert asked.status_code == 202, asked.json()
    assert asked.json()["queue"] == settings.FRAMELEDGER_BUNDLE_GPU_QUEUE
    assert asked.json()["limits"]["address_space_bytes"] == 0  # CUDA reserves more than any RLIMIT_AS
    run = wait_for(client, [asked.json()["id"]], process, log)[asked.json()["id"]]
    assert run["status"] == "done" and run["outcome"] == "ok", run
    call = run["stages"][1]
    assert "device cuda" in call["stderr"], call["stderr"][-2000:]  # retrieval's own line, from inside
    assert call["rows"] == 3

    # The same rows scored the same way as the library run on the CPU outside the sandbox:
    # the scan is exact on both devices (tests/retrieval/test_scan.py), so the reward is too.
    gt = json.loads(client.get(f"/api/versions/{version.pk}/export/?file=gt.json").content)
    params = {"corpus": [{"video_id": f"video-{version.packet.video_id}", "duration": DURATION, "grid": {"step": 2.0}}]}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # the library run below on the CPU
    cpu = score_submission("moment-utility-v1", gt, library_rows(tmp_path, version, features), **params).reward
    assert run["reward"] == pytest.approx(cpu, abs=1e-6) and run["reward"] > 0
