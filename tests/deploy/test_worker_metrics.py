"""A worker on a machine of its own (no gunicorn beside it to make the metrics folder or to add
its samples up): the worker makes the folder and, with FRAMELEDGER_WORKER_METRICS_BIND, serves
the machine's samples itself (deploy/celery.py; docs/deploy.md, "Multi-host drill")."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request

from deploy import celery as worker
from tests.http.live_server import free_port


def test_worker_makes_its_metrics_folder_and_serves_the_machines_samples(tmp_path, monkeypatch):
    folder = tmp_path / "metrics-of-this-machine"
    port = free_port()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))
    monkeypatch.setenv("FRAMELEDGER_WORKER_METRICS_BIND", f"127.0.0.1:{port}")
    worker._worker_metrics()
    assert folder.is_dir()
    # a sample another process of the machine (a pool child) writes into the folder
    probe = "from prometheus_client import Histogram; Histogram('frameledger_probe_seconds', 'p').observe(0.2)"
    subprocess.run([sys.executable, "-c", probe], check=True, env={**os.environ})
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    assert "frameledger_probe_seconds_count 1.0" in text
    worker._worker_metrics()  # a second worker of the machine: the port is taken, no crash


def test_without_a_metrics_folder_setting_the_worker_does_nothing(monkeypatch):
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    monkeypatch.setenv("FRAMELEDGER_WORKER_METRICS_BIND", "127.0.0.1:1")
    worker._worker_metrics()  # no server, no error
