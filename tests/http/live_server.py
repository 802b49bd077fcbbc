"""A real Daphne in a child process, started the way ``bin/run-demo`` starts it
(``python -m deploy.serve``), or as plain ``daphne`` to compare with."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

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
def daphne(env: dict[str, str], *, guarded: bool = True, log_path: Path | None = None):
    """Yield ``(port, process)`` of a Daphne serving ``deploy.asgi:application``."""
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
