"""The image's build files: the Dockerfile builds the venv with bin/setup-env and installs the
Debian packages with deploy/image-setup (the scripts bin/test runs, so CI runs what the image
has), runs as an unprivileged user, and every application service of the compose file builds it.
These tests read the files and run the scripts; tests/deploy/test_image_run.py builds and runs the
image with podman (bin/run-image)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_dockerfile_uses_the_ci_scripts_and_an_unprivileged_user():
    text = (ROOT / "Dockerfile").read_text()
    stages = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert stages == ["FROM ${BASE} AS builder", "FROM ${BASE} AS runtime"]
    assert "ARG BASE=python:3.11-slim-bookworm" in text.splitlines()  # the official image unless told
    assert "bin/setup-env requirements.txt" in text
    assert "COPY deploy/image-setup" in text and "frameledger-image-setup" in text
    assert "COPY --from=builder /app/.venv /app/.venv" in text
    assert "USER frameledger" in text.splitlines()
    assert "image-setup" in (ROOT / "bin/test").read_text()


def test_dockerignore_keeps_local_state_out_of_the_image():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".venv", "var/", "media/", ".git", "artifacts/", "secrets/"} <= ignored


def test_every_application_service_builds_the_image_and_only_sandbox_workers_are_root():
    services = yaml.safe_load((ROOT / "deploy/compose.yaml").read_text())["services"]
    ours = {name: s for name, s in services.items() if name not in {"postgres", "redis"}}
    assert ours
    for service in ours.values():
        assert service["build"]["context"] == ".." and service["build"]["dockerfile"] == "Dockerfile"
    assert (ROOT / "deploy" / ours["web"]["build"]["context"] / "Dockerfile").is_file()
    assert {name for name, s in ours.items() if s.get("user") == "root"} == {"worker-bundles", "worker-gpu"}
    nginx = " ".join(ours["nginx"]["command"])
    assert "/etc/nginx" not in nginx and "FRAMELEDGER_NGINX_LISTEN=8443" in nginx  # no root needed
    assert ours["worker-ingest"]["environment"]["FRAMELEDGER_WORKER_METRICS_BIND"].endswith(":9100")
    assert "/srv/media" not in " ".join(ours["beat"]["command"])  # the schedule is the beat host's own


def test_image_setup_lists_and_checks_the_packages():
    listed = subprocess.run([ROOT / "deploy/image-setup", "--list"], capture_output=True, text=True, check=True)
    packages = listed.stdout.split()
    assert {"nginx", "bubblewrap", "util-linux", "mount", "e2fsprogs", "curl"} <= set(packages)
    check = subprocess.run([ROOT / "deploy/image-setup", "--check"], capture_output=True, text=True)
    installed = all(subprocess.run(["dpkg-query", "-W", p], capture_output=True).returncode == 0 for p in packages)
    assert check.returncode == (0 if installed else 1), check.stderr
