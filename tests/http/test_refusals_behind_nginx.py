"""A body refused from its head reaches the client as the refusal, behind nginx too.

``deploy.upload_auth`` and ``deploy.body_limits`` answer a large body from its request head
(403 for a stranger's upload, 413 over the limit) without reading it. Behind nginx (the
production topology, ``bin/run-stack``), nginx is still streaming the body to the web
process when the answer comes; a server that then closes with the body unread resets the
connection, nginx loses the answer, and the client is told the service is unavailable and
to retry (503) instead of why it was refused.
"""

from __future__ import annotations

import json
import socket
import threading

import pytest
from django.conf import settings

from tests.http import live_server
from tests.http.live_server import read_response
from tests.http.nginx_front import HAVE_NGINX, nginx_front

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not HAVE_NGINX, reason="nginx is not installed (deploy/image-setup installs it)"),
]
embedded = live_server.embedded
MIB = 1024 * 1024


def upload(port: int, path: str, size: int, *headers: str) -> tuple[int, dict]:
    """A client that sends a ``size``-byte body while it waits for the answer, as curl and
    browsers do; the answer's status and JSON body."""
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {size}",
             "Content-Type: application/octet-stream", *headers]  # fmt: skip
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())

        def send_body():
            block, left = b"x" * MIB, size
            try:
                while left > 0:
                    sock.sendall(block[: min(left, MIB)])
                    left -= MIB
            except OSError:
                pass  # refused: nginx stopped reading

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        response = read_response(sock, timeout=30)
    first, _, rest = response.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(first.split()[1]), json.loads(body) if body.startswith(b"{") else {"raw": body[:200].decode("latin-1")}


# Each upload route, with bodies over the small limit and within the route's own (nginx
# would refuse a larger one itself, as 413).
ROUTES = ["/api/videos/", "/api/packets/1/submissions/", "/api/uploads/" + "0" * 32 + "/", "/api/versions/1/bundles/"]


@pytest.mark.parametrize("path", ROUTES)
def test_a_strangers_upload_is_refused_as_such_through_nginx(embedded, tmp_path, path):
    from deploy.body_limits import limit_for

    small, limit = settings.FRAMELEDGER_MAX_BODY_BYTES, limit_for(path)
    assert limit > small
    upstream, _ = embedded()
    with nginx_front(upstream, tmp_path / "nginx") as (port, _):
        for size in (small + 1, min(limit, 64 * MIB), 2 * small, min(limit, 96 * MIB)):
            status, body = upload(port, path, size)
            assert status == 403, (size, status, body)
            assert body["error"]["code"] == "not_authenticated", body
