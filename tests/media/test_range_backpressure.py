"""Item 2 of issue 27: media responses never run ahead of the client.

Under Daphne, a raw client that read 1 MB of a ``bytes=0-`` answer and paused was logged as
the whole 2.5 GB file and cost 1.6 CPU-seconds, and seeking a 2-hour video raised the
server's memory from 2.3 to 10 GB. On the embedded default's server (uvicorn) the file is
read only as fast as the socket drains, an open range is answered with at most
``FRAMELEDGER_MEDIA_RANGE_BYTES``, and the access log counts the bytes actually sent. Both
it and nginx (``deploy/nginx.py``, the production topology) fix each connection's send
buffer, so a seek that drops its answer has cost little more than what it read."""

from __future__ import annotations

import logging
import os
import random
import re
import socket
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from annotator.models import Video
from tests.http import live_server
from tests.http.live_server import rss_bytes
from tests.http.nginx_front import HAVE_NGINX, access_entries, nginx_front

pytestmark = pytest.mark.django_db(transaction=True)
embedded = live_server.embedded  # the uvicorn child fixture (tests/http/live_server.py)
MIB = 1024 * 1024
SIZE = 512 * MIB


@pytest.fixture
def big_video(maintainer):
    """A ready video whose proxy is a 512 MiB (sparse) file: its bytes are never looked at."""
    path = Path(settings.MEDIA_ROOT) / "videos" / "proxy" / "big.mp4"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(SIZE)
    return Video.objects.create(
        title="big", original_name="big.mp4", created_by=maintainer, status=Video.Status.READY,
        proxy="videos/proxy/big.mp4", proxy_sha256="ab" * 32,
    )  # fmt: skip


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def read_bytes_of(pid: int) -> int:
    """Bytes the process has read with read(2) and friends (files and sockets)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("no rchar")


def get_head(port: int, path: str, cookie: str, *headers: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", f"Cookie: {cookie}", *headers]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    return sock


def read_at_least(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def access_log_to(path: Path):
    def setup():  # in the server process
        handler = logging.FileHandler(path)
        logger = logging.getLogger("frameledger.access")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)

    return setup


def test_a_client_that_stops_reading_stops_the_reads_and_is_logged_with_what_it_got(
    embedded, big_video, maintainer, tmp_path
):
    log = tmp_path / "access.log"
    port, pid = embedded(setup=access_log_to(log))
    cookie = session_cookie(maintainer)
    url = f"/media/videos/{big_video.pk}/proxy.mp4"
    before_rss, before_read = rss_bytes(pid), read_bytes_of(pid)
    sock = get_head(port, url, cookie)  # no Range: 200 with all 512 MiB
    head = read_at_least(sock, MIB)
    assert head.startswith(b"HTTP/1.1 200") and f"content-length: {SIZE}".encode() in head.lower()
    time.sleep(2.0)  # the client pauses; a server without flow control reads on
    read_while_paused = read_bytes_of(pid) - before_read
    assert read_while_paused < 32 * MIB, read_while_paused
    assert rss_bytes(pid) - before_rss < 32 * MIB
    sock.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "proxy.mp4" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    line = [entry for entry in log.read_text().splitlines() if "proxy.mp4" in entry][-1]
    sent = int(re.search(r"sent=(\d+)", line).group(1))
    assert MIB <= sent < 32 * MIB, line
    assert f"of={SIZE}" in line and "aborted" in line


def test_an_open_range_gets_a_bounded_206_over_the_wire(embedded, big_video, maintainer):
    port, _ = embedded()
    sock = get_head(port, f"/media/videos/{big_video.pk}/proxy.mp4", session_cookie(maintainer), "Range: bytes=0-")
    cap = settings.FRAMELEDGER_MEDIA_RANGE_BYTES
    data = read_at_least(sock, 1)
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 206")
    assert f"content-range: bytes 0-{cap - 1}/{SIZE}".encode() in head.lower()
    body += read_at_least(sock, cap - len(body))
    assert len(body) == cap
    sock.close()
    assert os.path.getsize(big_video.proxy.path) == SIZE


def test_every_accepted_connection_has_the_fixed_send_buffer():
    from deploy.serve import SEND_BUFFER_BYTES, listening_socket

    with listening_socket("127.0.0.1", 0) as listener:
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        with client, accepted:
            # Linux doubles the value for its bookkeeping; without it a connection's buffer
            # grows to megabytes as a fast client reads.
            assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) <= 2 * SEND_BUFFER_BYTES


def seek_and_drop(port: int, url: str, cookie: str, seeks: int, need: int = 512 * 1024) -> int:
    """What a <video> does at each seek: an open range at a new offset, read what it needs,
    drop the connection (the client's socket keeps the kernel's default buffers). Returns
    the bytes read."""
    rng, read = random.Random(27), 0
    for _ in range(seeks):
        offset = rng.randrange(0, SIZE - 16 * MIB)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            lines = [f"GET {url} HTTP/1.1", "Host: 127.0.0.1", f"Cookie: {cookie}", f"Range: bytes={offset}-"]
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            data = read_at_least(sock, 1)
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 206"), head
            read += len(body) + len(read_at_least(sock, need - len(body)))
    return read


def test_seeks_that_read_half_a_mebibyte_and_drop_cost_at_most_twice_what_they_read(
    embedded, big_video, maintainer, tmp_path
):
    # What a <video> does at each seek: an open range at a new offset, read what it needs,
    # drop the connection. The server's log counts what it handed to the socket for each.
    log = tmp_path / "access.log"
    port, _ = embedded(setup=access_log_to(log))
    cookie = session_cookie(maintainer)
    url = f"/media/videos/{big_video.pk}/proxy.mp4"
    seeks = 40
    read = seek_and_drop(port, url, cookie, seeks)
    deadline = time.monotonic() + 20
    lines: list[str] = []
    while time.monotonic() < deadline and len(lines) < seeks:
        lines = [e for e in (log.read_text() if log.exists() else "").splitlines() if "proxy.mp4" in e]
        time.sleep(0.1)
    assert len(lines) == seeks, lines[-3:]
    sent = sum(int(re.search(r"sent=(\d+)", line).group(1)) for line in lines)
    assert sent <= 2 * read, (sent, read)


def seeks_through_nginx(upstream: int, folder: Path, cookie: str, url: str, send_buffer: str) -> tuple[int, int]:
    """40 seeks of 512 KiB through nginx as deploy/nginx.py configures it, in front of
    ``upstream``: (bytes read, bytes nginx logged as sent for them)."""
    seeks = 40
    with nginx_front(upstream, folder, FRAMELEDGER_SEND_BUFFER_BYTES=send_buffer) as (port, log):
        read = seek_and_drop(port, url, cookie, seeks)
    answers = [entry["bytes"] for entry in access_entries(log) if "proxy.mp4" in entry["uri"]]
    assert len(answers) == seeks, answers[-3:]
    return read, sum(answers)


@pytest.mark.skipif(not HAVE_NGINX, reason="nginx is not installed (deploy/image-setup installs it)")
def test_seeks_through_nginx_cost_at_most_twice_what_they_read(embedded, big_video, maintainer, tmp_path, settings):
    # The production topology: the application checks access and hands the file to nginx
    # (X-Accel-Redirect), which sends it with sendfile. The rendered listen fixes each
    # connection's send buffer as the embedded server does; left to the kernel ("0"), a fast
    # loopback connection's buffer grows to megabytes and each dropped seek costs that.
    settings.FRAMELEDGER_MEDIA_ACCEL_PREFIX = "/_media/"
    upstream, _ = embedded()
    cookie, url = session_cookie(maintainer), f"/media/videos/{big_video.pk}/proxy.mp4"
    read, sent = seeks_through_nginx(upstream, tmp_path / "fixed", cookie, url, "")
    assert sent <= 2 * read, (sent, read)
    kernel_read, kernel_sent = seeks_through_nginx(upstream, tmp_path / "kernel", cookie, url, "0")
    assert sent / read < kernel_sent / kernel_read, (sent / read, kernel_sent / kernel_read)
