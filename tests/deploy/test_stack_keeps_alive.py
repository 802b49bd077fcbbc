"""The stack keeps itself alive (deploy/stack.py, deploy/pdeathsig.py): no process outlives
its parent holding a port, a start refuses ports someone else holds, and a killed web
master is started again while the stack goes on.

The first three run anywhere (no database); the last starts ``bin/run-stack`` and runs in
``bin/test``'s PostgreSQL + Redis pass."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from deploy.stack import port_in_use
from tests.deploy.stack import run_stack, wait_for

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except FileNotFoundError:
        return []


PARENT = """
import subprocess, sys, time
from deploy.pdeathsig import die_with_parent
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], preexec_fn=die_with_parent)
print(child.pid, flush=True)
time.sleep(120)
"""


def test_a_child_that_asked_for_it_dies_with_its_parent_killed_without_warning():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    wait_for(lambda: not alive(child), 10, "the child to die with its parent", interval=0.05)


def test_gunicorn_workers_die_with_a_master_killed_without_warning(tmp_path):
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
        "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
        "FRAMELEDGER_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "FRAMELEDGER_VAR_DIR": str(tmp_path),
    }
    log = open(tmp_path / "gunicorn.log", "w")  # noqa: SIM115
    master = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "deploy.asgi:application"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    workers: list[int] = []
    try:
        workers = wait_for(lambda: len(children(master.pid)) == 2 and children(master.pid), 60, "two web workers")
        wait_for(lambda: port_in_use(port), 60, "the web port")
        master.send_signal(signal.SIGKILL)
        master.wait()
        wait_for(lambda: not any(alive(w) for w in workers), 20, "the orphaned workers to exit")
        wait_for(lambda: not port_in_use(port), 10, "the port to be free")
    finally:
        if master.poll() is None:
            master.kill()
        for worker in workers:  # orphans, if the workers did not die with their master
            if alive(worker):
                os.kill(worker, signal.SIGKILL)
        log.close()


def test_a_start_on_a_port_someone_else_holds_refuses_and_names_it(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "deploy.stack", "--port", str(taken), "--web-port", str(free_port()),
             "--dir", str(tmp_path / "stack")],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1
    assert f"port {taken} of 127.0.0.1 is in use by another process" in done.stderr
    assert "stack on http" not in done.stdout
    assert time.monotonic() - started < 30
    assert list((tmp_path / "stack" / "logs").iterdir()) == []  # nothing was started


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.redis
def test_a_killed_web_master_is_started_again_and_leaves_no_orphans(tmp_path):
    with run_stack(tmp_path) as stack:
        master = stack.state()["processes"]["web"]
        workers = children(master)
        assert len(workers) == 2
        assert requests.get(f"{stack.base}/readyz", timeout=10).headers["X-FrameLedger-Instance"]
        os.kill(master, signal.SIGKILL)
        wait_for(lambda: not any(alive(w) for w in workers), 60, "the old web workers to exit")
        wait_for(lambda: stack.state()["restarts"].get("web") == 1, 90, "the web master to be started again")
        new_master = stack.state()["processes"]["web"]
        assert new_master != master

        def ready() -> bool:
            try:
                return requests.get(f"{stack.base}/readyz", timeout=5).status_code == 200
            except requests.RequestException:
                return False

        wait_for(ready, 90, "the stack to answer again")
        assert stack.process.poll() is None
        assert "web exited (-9); starting it again" in stack.output.read_text()
