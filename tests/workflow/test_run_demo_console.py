"""A newcomer's first minutes with ``bin/run-demo`` in a fresh checkout (the virtual environment
already present, to keep it short): something is printed at once, each step says what it does,
the sign-in box comes last once the first page answers, the passwords are kept in a file only the
user can read, ``manage.py demo_accounts`` prints them again, and the console is not a stream of
request lines (those are in ``var/logs/web.log``)."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.http.live_server import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def fresh_checkout(target: Path) -> Path:
    """The files a clone has (tracked, and new ones not ignored), copied as they are now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the working tree
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(source.read_bytes())
        destination.chmod(source.stat().st_mode & 0o777)
    (target / ".venv").symlink_to(ROOT / ".venv")
    return target


def demo_env(port: int) -> dict:
    # The demo's own defaults only: no database, broker or settings of the suite around it.
    dropped = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "CHANNELS_", "FRAMELEDGER_", "LOG_", "PYTEST")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update({"PORT": str(port), "DEMO_FRAMES": "240", "PYTHONUNBUFFERED": "1"})
    return env


def test_a_fresh_run_demo_says_each_step_and_ends_with_the_sign_in_box(tmp_path):
    checkout = fresh_checkout(tmp_path / "clone")
    port = free_port()
    console = tmp_path / "console.txt"
    started = time.monotonic()
    with open(console, "wb") as out:
        demo = subprocess.Popen(
            ["bin/run-demo"],
            cwd=checkout,
            env=demo_env(port),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        while not console.read_text().strip():
            assert demo.poll() is None, "bin/run-demo ended before printing anything"
            assert time.monotonic() - started < 5, "nothing printed within 5 s"
            time.sleep(0.05)

        deadline = time.monotonic() + 300
        while "manage.py demo_accounts" not in console.read_text():
            assert demo.poll() is None, console.read_text()[-4000:]
            assert time.monotonic() < deadline, console.read_text()[-4000:]
            time.sleep(0.5)
        assert requests.get(f"http://127.0.0.1:{port}/login/", timeout=10).status_code == 200

        text = console.read_text()
        for step in ("== Python packages", "== Migrating", "== Loading the demo data", "== Starting the Celery worker"):
            assert step in text, text
        last = text.strip().splitlines()[-20:]
        box = [line for line in last if line.startswith("|")]
        assert any(f"http://127.0.0.1:{port}/" in line for line in box), last
        passwords = dict(
            re.findall(r"^\|\s+(annotator_a|annotator_b|adjudicator|maintainer)\s+(\S+)\s+\|$", text, re.M)
        )
        assert set(passwords) == {"annotator_a", "annotator_b", "adjudicator", "maintainer"}, last

        accounts = checkout / "var/demo-accounts.txt"
        assert stat.S_IMODE(accounts.stat().st_mode) == 0o600
        env = {k: v for k, v in demo_env(port).items() if k != "PORT"}
        again = subprocess.run(
            [sys.executable, "manage.py", "demo_accounts"], cwd=checkout, env=env, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert again.stdout == accounts.read_text() and passwords["maintainer"] in again.stdout

        # the printed password signs in; the request is in the web log, not on the console
        session = requests.Session()
        session.get(f"http://127.0.0.1:{port}/login/", timeout=10)
        signed_in = session.post(
            f"http://127.0.0.1:{port}/login/",
            data={"username": "maintainer", "password": passwords["maintainer"],
                  "csrfmiddlewaretoken": session.cookies["csrftoken"]},
            headers={"Origin": f"http://127.0.0.1:{port}"},
            allow_redirects=False,
            timeout=10,
        )  # fmt: skip
        assert signed_in.status_code == 302, signed_in.text[:500]
        deadline = time.monotonic() + 10
        while "POST /login/" not in (checkout / "var/logs/web.log").read_text():
            assert time.monotonic() < deadline, (checkout / "var/logs/web.log").read_text()[-2000:]
            time.sleep(0.2)
        assert "/login/" not in console.read_text().split("manage.py demo_accounts")[-1]
        assert "superuser privileges" not in console.read_text().replace("about superuser privileges", "")
    finally:
        os.killpg(demo.pid, signal.SIGINT)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()


def test_a_taken_port_is_said_before_any_slow_step(tmp_path):
    checkout = fresh_checkout(tmp_path / "clone")
    port = free_port()
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen(1)
        answer = subprocess.run(
            ["bin/run-demo"], cwd=checkout, env=demo_env(port), capture_output=True, text=True, timeout=120
        )
    assert answer.returncode == 1
    assert f"Port {port} is taken" in answer.stderr and "PORT=" in answer.stderr
    assert "== Migrating" not in answer.stdout


def test_the_console_filter_keeps_warnings_and_task_lines_but_not_requests_or_sweeps():
    import logging

    from deploy.logs import ConsoleFilter

    console = ConsoleFilter("WARNING", "celery.app.trace,annotator.actions", "annotator.ingest_sweep")

    def record(name: str, level: int, message: str) -> logging.LogRecord:
        return logging.LogRecord(name, level, __file__, 1, message, None, None)

    assert console.filter(record("frameledger.access", logging.WARNING, "a slow request"))
    assert not console.filter(record("frameledger.access", logging.INFO, '127.0.0.1 "GET /" 200'))
    assert console.filter(record("celery.app.trace", logging.INFO, "Task annotator.score_batch[1] succeeded"))
    assert not console.filter(record("celery.app.trace", logging.INFO, "Task annotator.ingest_sweep[2] succeeded"))
    assert console.filter(record("annotator.actions.ingest", logging.INFO, "video 1: proxy first"))
    assert not console.filter(record("annotator.actionsx", logging.INFO, "another logger"))
    assert not console.filter(record("annotator.actions.ingest", logging.DEBUG, "detail"))
