"""Start ``bin/run-stack`` for a test: its own PostgreSQL database, its own queue and
channel names, free ports, a temporary stack folder; stop it with SIGTERM afterwards."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import psycopg
import pytest
import requests

from tests.http.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]
EGOCENTRIC_SOLUTION = ROOT / "data/agentic-vbench/egocentric-activity-understanding/calibration/rollouts"


def stack_database_url() -> str:
    """``STACK_TEST_DATABASE_URL``, else the suite's PostgreSQL database name + ``_stack``."""
    explicit = os.environ.get("STACK_TEST_DATABASE_URL")
    if explicit:
        return explicit
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        pytest.skip("the stack runs on PostgreSQL: set DATABASE_URL (bin/test's second pass does)")
    parsed = urlparse(base)
    return parsed._replace(path=parsed.path.rstrip("/") + "_stack").geturl()


def stack_redis_url() -> str:
    url = os.environ.get("STACK_TEST_REDIS_URL") or os.environ.get("REDIS_URL")
    if not url:
        pytest.skip("the stack needs Redis: set REDIS_URL (bin/test's second pass does)")
    return url


def recreate_database(url: str) -> None:
    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


class Stack:
    def __init__(self, process: subprocess.Popen, port: int, folder: Path, env: dict, output: Path):
        self.process, self.port, self.dir, self.env, self.output = process, port, folder, env, output
        self.base = f"http://127.0.0.1:{port}"
        self.passwords = dict(re.findall(r"^\s+(\w+)\s+(\S+)$", output.read_text(), re.M))

    def state(self) -> dict:
        return json.loads((self.dir / "stack.json").read_text())

    def log(self, name: str) -> str:
        path = self.dir / "logs" / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def session(self, username: str) -> requests.Session:
        session = requests.Session()
        page = session.get(f"{self.base}/login/", timeout=30)
        assert page.status_code == 200, page.text[:500]
        token = session.cookies["csrftoken"]
        response = session.post(
            f"{self.base}/login/",
            data={"username": username, "password": self.passwords[username], "csrfmiddlewaretoken": token},
            headers={"Referer": f"{self.base}/login/", "Origin": self.base},  # as a browser sends them
            timeout=30,
            allow_redirects=False,
        )
        assert response.status_code == 302, response.text[:500]
        session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
        session.headers["Referer"] = f"{self.base}/"
        session.headers["Origin"] = self.base
        return session

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [str(ROOT / ".venv/bin/python"), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout


@contextmanager
def run_stack(tmp_path: Path, *, web_workers: int = 2, extra_env: dict | None = None, database_url=None):
    folder = tmp_path / "stack"
    suffix = uuid.uuid4().hex[:8]
    database_url = database_url or stack_database_url()
    recreate_database(database_url)
    port, web_port = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_SETTINGS"))},
        "STACK_DIR": str(folder),
        "STACK_PORT": str(port),
        "STACK_WEB_PORT": str(web_port),
        "WEB_CONCURRENCY": str(web_workers),
        "STACK_SEED": "1",
        "DATABASE_URL": database_url,
        "REDIS_URL": stack_redis_url(),
        "CHANNELS_PREFIX": f"stack-{suffix}",
        "CACHE_PREFIX": f"stack-{suffix}",
        "CELERY_QUEUE": f"default-{suffix}",
        "FRAMELEDGER_INGEST_QUEUE": f"ingest-{suffix}",
        "FRAMELEDGER_SCORING_QUEUE": f"scoring-{suffix}",
        "FRAMELEDGER_RETRIEVAL_QUEUE": f"retrieval-{suffix}",
        "FRAMELEDGER_BUNDLE_QUEUE": f"bundles-{suffix}",
        "FRAMELEDGER_BUNDLE_GPU_QUEUE": f"gpu-{suffix}",
        **(extra_env or {}),
    }
    env.pop("DJANGO_SECRET_KEY", None)
    env["DJANGO_SETTINGS_MODULE"] = "deploy.settings"
    output = tmp_path / "run-stack.out"
    with open(output, "w") as out:
        command = [str(ROOT / "bin/run-stack")]
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + 300
    while "stack on http" not in output.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError("bin/run-stack did not start:\n" + output.read_text()[-5000:])
        time.sleep(0.5)
    manage_env = {**env, "DJANGO_SECRET_KEY_FILE": str(folder / "secret_key"), "FRAMELEDGER_VAR_DIR": str(folder),
                  "FRAMELEDGER_MEDIA_ROOT": str(folder / "media")}  # fmt: skip
    stack = Stack(process, port, folder, manage_env, output)
    try:
        yield stack
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def wait_for(predicate, timeout: float, what: str, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")
