"""Server memory before and after an unauthenticated 600 MB POST to /login/ and the upload routes.

Starts a real server on a free port twice: as ``bin/run-demo`` starts it
(``python -m deploy.serve``: uvicorn, which hands the body to the ASGI middleware as it
arrives) and as plain ``daphne`` (the same middleware, which Daphne calls after buffering
the body).
Sends each body over a socket in 1 MiB pieces (multipart, as a browser's upload form would)
and stops when the server answers.
Prints the server's resident memory (RSS) before, after, and its peak (VmHWM) for each path.

    DJANGO_SETTINGS_MODULE=deploy.test_settings .venv/bin/python bench/body_limits.py \
        [--mib 600] [--path /api/videos/ --path ...]
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.http.live_server import read_response, server  # noqa: E402

MIB = 1024 * 1024


def memory(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in {"VmRSS", "VmHWM"}:
            fields[name] = int(value.split()[0]) * 1024
    return fields


PATHS = ["/login/", "/api/videos/", "/api/packets/1/submissions/"]


def post_body(port: int, path: str, total: int) -> tuple[int, bytes, float]:
    """Send a ``total``-byte body to ``path`` without credentials; return (bytes sent, status
    line, seconds)."""
    sock = socket.create_connection(("127.0.0.1", port))
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: multipart/form-data; boundary=frameledgerbench\r\n"
        f"Content-Length: {total}\r\n\r\n"
    ).encode()
    sock.sendall(head)
    piece = b"x" * MIB
    sent = 0
    start = time.monotonic()
    try:
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break  # the server has answered: stop sending
            chunk = piece[: min(MIB, total - sent)]
            sock.sendall(chunk)
            sent += len(chunk)
        response = read_response(sock, timeout=600)
    except (BrokenPipeError, ConnectionResetError):
        response = b"(connection closed by the server)"
    finally:
        sock.close()
    return sent, response.split(b"\r\n", 1)[0], time.monotonic() - start


def run(guarded: bool, paths: list[str], total: int) -> None:
    label = "python -m deploy.serve" if guarded else "plain daphne (ASGI middleware only)"
    env = {"DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "deploy.test_settings")}
    with server(env, guarded=guarded) as (port, process):
        time.sleep(1.0)
        for path in paths:
            before = memory(process.pid)
            sent, status, seconds = post_body(port, path, total)
            time.sleep(2.0)
            after = memory(process.pid)
            print(
                f"{label} {path}: body {total / MIB:.0f} MiB, client sent {sent / MIB:.0f} MiB in "
                f"{seconds:.2f} s, answer {status.decode(errors='replace')!r}; server RSS before "
                f"{before['VmRSS'] / MIB:.0f} MiB, after {after['VmRSS'] / MIB:.0f} MiB, "
                f"peak so far {after['VmHWM'] / MIB:.0f} MiB",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=600, help="body size in MiB (default 600)")
    parser.add_argument("--path", action="append", help=f"a route to post to, repeatable (default: {' '.join(PATHS)})")
    parser.add_argument("--guarded-only", action="store_true", help="skip the plain-daphne comparison")
    args = parser.parse_args()
    paths = args.path or PATHS
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    run(True, paths, args.mib * MIB)
    if not args.guarded_only:
        run(False, paths, args.mib * MIB)


if __name__ == "__main__":
    main()
