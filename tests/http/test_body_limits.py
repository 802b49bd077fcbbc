"""Item 3 of issue 10: a 600 MB unauthenticated POST to /login/ was read whole (server
memory 209 -> 812 MB) before the 403. Bodies over the path's limit are now refused with
413 and the JSON error body from the request head, before authentication."""

from __future__ import annotations

import json
import socket

import pytest
from django.conf import settings

from deploy.body_limits import limit_for
from tests.http.live_server import read_response, rss_bytes, server

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def guarded():
    """The embedded default as bin/run-demo starts it (python -m deploy.serve: uvicorn)."""
    with server({"DJANGO_SETTINGS_MODULE": "deploy.test_settings"}) as running:
        yield running


@pytest.fixture(scope="module")
def plain():
    """Plain daphne: only the ASGI middleware in deploy/asgi.py applies."""
    with server({"DJANGO_SETTINGS_MODULE": "deploy.test_settings"}, guarded=False) as running:
        yield running


def head(method: str, path: str, *headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_and_body(response: bytes) -> tuple[int, dict | None]:
    first, _, rest = response.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(first.split()[1]), json.loads(body) if body.startswith(b"{") else None


def chunked(total: int, piece: int = MIB) -> bytes:
    out = b""
    while total > 0:
        size = min(piece, total)
        out += b"%x\r\n" % size + b"x" * size + b"\r\n"
        total -= size
    return out + b"0\r\n\r\n"


def test_a_600_mb_login_post_gets_413_before_the_body_is_sent(guarded):
    port, process = guarded
    before = rss_bytes(process.pid)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head("POST", "/login/", f"Content-Length: {600 * MIB}", "Content-Type: text/plain"))
        sock.sendall(b"x" * 65536)  # a sliver of the 600 MB, then wait for the answer
        status, body = status_and_body(read_response(sock))
    assert status == 413
    assert body["error"]["code"] == "too_large"
    assert str(settings.FRAMELEDGER_MAX_BODY_BYTES) in body["error"]["message"]
    assert rss_bytes(process.pid) - before < 20 * MIB


def test_expect_100_continue_is_answered_413_and_never_told_to_send(guarded):
    port, _ = guarded
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head("POST", "/api/auth/token/", f"Content-Length: {50 * MIB}", "Expect: 100-continue"))
        response = read_response(sock)
    assert response.startswith(b"HTTP/1.1 413")
    assert b"100 Continue" not in response


@pytest.mark.parametrize("server", ["guarded", "plain"])
def test_a_chunked_body_is_counted_and_refused_past_the_limit(server, request):
    port, _ = request.getfixturevalue(server)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head("POST", "/api/auth/token/", "Transfer-Encoding: chunked", "Content-Type: application/json"))
        sock.sendall(chunked(settings.FRAMELEDGER_MAX_BODY_BYTES + MIB))
        status, body = status_and_body(read_response(sock))
    assert (status, body["error"]["code"]) == (413, "too_large")


def test_the_asgi_middleware_refuses_by_content_length_without_reading(plain):
    port, _ = plain
    with socket.create_connection(("127.0.0.1", port)) as sock:
        size = settings.FRAMELEDGER_MAX_BODY_BYTES + 1
        sock.sendall(head("POST", "/login/", f"Content-Length: {size}") + b"x" * size)
        status, body = status_and_body(read_response(sock))
    assert (status, body["error"]["code"]) == (413, "too_large")


@pytest.mark.parametrize("server", ["guarded", "plain"])
def test_a_bad_content_length_is_a_400_json_error(server, request):
    port, _ = request.getfixturevalue(server)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head("POST", "/api/auth/token/", "Content-Length: 12, 13"))
        status, _ = status_and_body(read_response(sock))
    assert status == 400


@pytest.mark.parametrize("server", ["guarded", "plain"])
def test_upload_routes_take_large_bodies_and_still_require_sign_in(server, request):
    port, _ = request.getfixturevalue(server)
    size = settings.FRAMELEDGER_MAX_BODY_BYTES + 2 * MIB
    paths = ("/api/videos/", "/api/packets/1/submissions/", "/api/versions/1/bundles/", "/api/moment-imports/",
             "/api/videos/1/search-index/")  # fmt: skip
    for path in paths:
        assert limit_for(path) > size
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head("POST", path, f"Content-Length: {size}", "Content-Type: application/octet-stream"))
            # The embedded default answers from the head (deploy.upload_auth) and closes, so
            # its client sends a sliver; plain Daphne reads the whole body first.
            sock.sendall(b"x" * (65536 if server == "guarded" else size))
            status, body = status_and_body(read_response(sock))
        assert (status, body["error"]["code"]) == (403, "not_authenticated"), path


def test_only_the_listed_upload_routes_get_a_large_limit():
    small = settings.FRAMELEDGER_MAX_BODY_BYTES
    for path in ("/login/", "/admin/login/", "/api/auth/token/", "/api/videos/1/", "/api/packets/1/", "/",
                 "/api/versions/1/", "/api/bundle-runs/1/"):  # fmt: skip
        assert limit_for(path) == small, path
    assert limit_for("/api/videos/") > settings.FRAMELEDGER_MAX_VIDEO_BYTES
    assert limit_for("/api/packets/7/submissions/") > small
    assert limit_for("/api/versions/3/bundles/") > settings.FRAMELEDGER_BUNDLE_MAX_BYTES
    assert limit_for("/api/moment-imports/") > small
    assert limit_for("/api/videos/4/search-index/") > 512 * MIB


def test_wsgi_keeps_non_file_request_data_under_the_same_small_limit(client):
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE <= settings.FRAMELEDGER_MAX_BODY_BYTES
    data = "username=x&password=" + "y" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    response = client.post("/login/", data, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
