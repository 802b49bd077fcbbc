"""A real server in a child process, started the way ``bin/run-demo`` starts it
(``python -m deploy.serve``: uvicorn), or as plain ``daphne`` to compare with."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


@contextmanager
def server(env: dict[str, str], *, guarded: bool = True, log_path: Path | None = None):
    """Yield ``(port, process)`` of a server of ``deploy.asgi:application``: the embedded
    default (``python -m deploy.serve``, uvicorn) when ``guarded``, plain Daphne otherwise."""
    port = free_port()
    runner = [sys.executable, "-m", "deploy.serve"] if guarded else [sys.executable, "-m", "daphne"]
    command = [*runner, "-b", "127.0.0.1", "-p", str(port), "deploy.asgi:application"]
    log = open(log_path or os.devnull, "w")  # noqa: SIM115
    process = subprocess.Popen(command, env={**os.environ, **env}, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process)
        yield port, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def read_response(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes or stays quiet after a full head."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
            if length and len(body) >= int(length[0].split(b":")[1]):
                break
    return data


class UvicornProcess(multiprocessing.Process):
    """The embedded default's server (``deploy.serve.server_config``: uvicorn) in a forked
    child process, on the parent's settings and test database; the counterpart of Channels'
    ``DaphneProcess`` for live-server tests. ``port`` and ``ready`` tell the parent when it
    listens."""

    def __init__(self, host: str, get_application, setup=None):
        super().__init__(daemon=True)
        self.host = host
        self.get_application = get_application
        self.setup = setup
        self.port = multiprocessing.Value("i", 0)
        self.ready = multiprocessing.Event()

    def run(self):
        import uvicorn

        from deploy.serve import listening_socket, server_config

        os.environ["FRAMELEDGER_ACCESS_LOG"] = "1"  # as deploy.serve sets it
        if self.setup is not None:
            self.setup()
        listener = listening_socket(self.host, 0)  # the embedded default's own socket settings
        self.port.value = listener.getsockname()[1]
        config = server_config(self.get_application(), host=self.host, port=self.port.value)
        server = uvicorn.Server(config)
        self.ready.set()
        server.run(sockets=[listener])


@pytest.fixture
def embedded(django_db_blocker):
    """(setup=None) -> (port, pid) of a uvicorn child serving deploy.asgi on the test
    database (a transactional test), started when called: after the test made its rows and
    settings, which the child inherits. ``setup()`` runs in the child before it serves."""
    from channels.testing.live import make_application
    from django.db import connections

    processes = []

    def start(setup=None):
        def child_setup():
            # The settings already name the test database (pytest-django switched them
            # before the fork), on SQLite and PostgreSQL alike.
            django_db_blocker.unblock()
            if setup is not None:
                setup()

        process = UvicornProcess("127.0.0.1", partial(make_application, static_wrapper=None), setup=child_setup)
        connections.close_all()  # a forked child must not share the parent's database socket
        process.start()
        assert process.ready.wait(30), "the server did not start"
        processes.append(process)
        wait_listening(process.port.value)
        return process.port.value, process.pid

    yield start
    for process in processes:
        process.terminate()
        process.join(10)


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nothing listens")
