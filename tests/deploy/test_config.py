"""The production configuration files: nginx rendering, health, readiness, metrics, logs."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


def render_nginx(tmp_path, **env) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "deploy.nginx"],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "deploy.settings",
            "FRAMELEDGER_NGINX_RUNTIME_DIR": str(tmp_path),
            **env,
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def test_nginx_config_limits_bodies_per_location_and_passes_nginx_t(tmp_path):
    from django.conf import settings

    text = render_nginx(
        tmp_path,
        FRAMELEDGER_MEDIA_ACCEL_PREFIX="/_media/",
        FRAMELEDGER_NGINX_LISTEN="127.0.0.1:1",
        FRAMELEDGER_NGINX_UPSTREAMS="127.0.0.1:2,127.0.0.1:3",
    )
    assert f"client_max_body_size {settings.FRAMELEDGER_MAX_BODY_BYTES};" in text
    for pattern, limit in settings.FRAMELEDGER_UPLOAD_PATHS:
        block = text.split(f'location ~ "{pattern}"', 1)[1].split("}", 1)[0]
        assert f"client_max_body_size {limit};" in block
    # only the upload routes get more than the default limit
    sizes = {int(line.split()[1].rstrip(";")) for line in text.splitlines() if "client_max_body_size" in line}
    assert sizes == {settings.FRAMELEDGER_MAX_BODY_BYTES} | {limit for _, limit in settings.FRAMELEDGER_UPLOAD_PATHS}
    assert "location /_media/ {" in text and "internal;" in text
    assert "proxy_set_header Upgrade $http_upgrade;" in text
    assert "server 127.0.0.1:2" in text and "server 127.0.0.1:3" in text
    assert 'Strict-Transport-Security "' not in text  # no TLS, no HSTS
    if shutil.which("nginx"):
        (tmp_path / "nginx.conf").write_text(text)
        command = ["nginx", "-t", "-c", str(tmp_path / "nginx.conf"), "-e", str(tmp_path / "error.log")]
        check = subprocess.run(command, capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stderr


def test_nginx_fixes_the_send_buffer_as_the_embedded_server_does(tmp_path):
    # A seek drops a media response; what nginx had handed the kernel by then was sent for
    # nothing. The buffer is fixed (docs/media.md 8.4), or left to the kernel with 0.
    assert "    listen 127.0.0.1:1 sndbuf=131072;\n" in render_nginx(tmp_path, FRAMELEDGER_NGINX_LISTEN="127.0.0.1:1")
    text = render_nginx(tmp_path, FRAMELEDGER_NGINX_LISTEN="127.0.0.1:1", FRAMELEDGER_SEND_BUFFER_BYTES="65536")
    assert "    listen 127.0.0.1:1 sndbuf=65536;\n" in text
    text = render_nginx(tmp_path, FRAMELEDGER_NGINX_LISTEN="127.0.0.1:1", FRAMELEDGER_SEND_BUFFER_BYTES="0")
    assert "    listen 127.0.0.1:1;\n" in text and "sndbuf" not in text


def test_nginx_tls_and_hsts_come_from_the_environment(tmp_path):
    text = render_nginx(
        tmp_path,
        FRAMELEDGER_TLS_CERT="/etc/ssl/frameledger.pem",
        FRAMELEDGER_TLS_KEY="/etc/ssl/frameledger.key",
        DJANGO_SECURE_HSTS_SECONDS="31536000",
        DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS="1",
    )
    assert "listen 443 ssl sndbuf=131072;" in text and "ssl_protocols TLSv1.2 TLSv1.3;" in text
    assert 'add_header Strict-Transport-Security "max-age=31536000; includeSubDomains" always;' in text
    assert "return 301 https://$host$request_uri;" in text
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in text


def test_healthz_answers_without_touching_anything():
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_each_dependency():
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["ready"] is True
    assert set(body["checks"]) == {"database", "broker", "channel_layer"}


@pytest.mark.django_db
def test_readyz_is_503_when_the_broker_is_unreachable(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["checks"]["broker"]["ok"] is False and body["checks"]["database"]["ok"] is True


@pytest.mark.django_db
def test_metrics_has_request_latency_by_route_and_job_counts():
    client = Client()
    client.get("/healthz")
    text = client.get("/metrics").content.decode()
    assert (
        'frameledger_http_request_duration_seconds_bucket{le="0.1",method="GET",route="/healthz",status="200"}' in text
    )
    assert "frameledger_queue_depth" in text and "frameledger_jobs" in text


@pytest.mark.django_db
def test_metrics_are_refused_outside_the_allow_list(settings):
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 404
    settings.FRAMELEDGER_METRICS_ALLOW = ["10.0.0.0/8"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 404


def test_json_log_lines():
    from deploy.logs import JsonFormatter

    record = logging.LogRecord("frameledger.x", logging.WARNING, __file__, 1, "saved %s", ("e1",), None)
    entry = json.loads(JsonFormatter().format(record))
    assert entry["level"] == "WARNING" and entry["message"] == "saved e1" and entry["logger"] == "frameledger.x"


def test_scoring_ingest_and_retrieval_queues_route_by_setting():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; import json; "
            "print(json.dumps(settings.CELERY_TASK_ROUTES))",
        ],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
            "FRAMELEDGER_INGEST_QUEUE": "q-ingest",
            "FRAMELEDGER_SCORING_QUEUE": "q-scoring",
            "FRAMELEDGER_RETRIEVAL_QUEUE": "q-retrieval",
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    routes = json.loads(result.stdout)
    assert routes == {
        "annotator.ingest_*": {"queue": "q-ingest"},
        "annotator.score_*": {"queue": "q-scoring"},
        "annotator.build_search_index": {"queue": "q-retrieval"},
    }
