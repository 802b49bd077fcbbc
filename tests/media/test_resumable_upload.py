"""Item 4 of issue 27: resumable video uploads over the tus protocol (core, creation,
termination). The last test cuts a real connection to the embedded default's server in
the middle of a piece at 50 %, resumes from the offset the server reports, and checks that
the stored original's SHA-256 equals the source's, directly and through nginx."""

from __future__ import annotations

import base64
import hashlib
import json
import socket

import pytest
from django.test import Client

from annotator.actions.ingest import file_sha256
from annotator.actions.tokens import do_issue_token
from annotator.models import Job, ResumableUpload, Video
from tests.factories import client_for
from tests.http import live_server
from tests.http.live_server import read_response
from tests.http.nginx_front import HAVE_NGINX, nginx_front

embedded = live_server.embedded  # the uvicorn child fixture (tests/http/live_server.py)
TUS = {"HTTP_TUS_RESUMABLE": "1.0.0"}
OFFSET_TYPE = "application/offset+octet-stream"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def create(client, length: int, title: str = "match", filename: str = "match.mp4"):
    return client.post(
        "/api/uploads/",
        HTTP_UPLOAD_LENGTH=str(length),
        HTTP_UPLOAD_METADATA=f"filename {b64(filename)},title {b64(title)}",
        **TUS,
    )


def patch(client, url: str, offset: int, data: bytes):
    return client.generic("PATCH", url, data, content_type=OFFSET_TYPE, HTTP_UPLOAD_OFFSET=str(offset), **TUS)


@pytest.mark.django_db
def test_options_names_the_protocol_and_its_extensions(maintainer):
    response = client_for(maintainer).options("/api/uploads/")
    assert response.status_code == 204
    assert response["Tus-Resumable"] == "1.0.0" and response["Tus-Version"] == "1.0.0"
    assert set(response["Tus-Extension"].split(",")) == {"creation", "termination"}
    assert int(response["Tus-Max-Size"]) > 0


@pytest.mark.django_db
def test_an_upload_in_pieces_registers_the_video_and_queues_its_ingest(maintainer, synthetic_source):
    data = synthetic_source("h264-2997-gop12").read_bytes()
    client = client_for(maintainer)
    created = create(client, len(data))
    assert created.status_code == 201 and created["Tus-Resumable"] == "1.0.0"
    url = created["Location"]
    assert url.startswith("/api/uploads/") and created["Upload-Offset"] == "0"
    third = len(data) // 3
    first = patch(client, url, 0, data[:third])
    assert first.status_code == 204 and first["Upload-Offset"] == str(third)
    head = client.head(url, **TUS)
    assert (head.status_code, head["Upload-Offset"], head["Upload-Length"]) == (200, str(third), str(len(data)))
    assert head["Cache-Control"] == "no-store"
    stale = patch(client, url, 0, data[:third])  # not at the server's offset
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "conflict"
    assert not Video.objects.exists()
    last = patch(client, url, third, data[third:])
    assert last.status_code == 204 and last["Upload-Offset"] == str(len(data))
    video = Video.objects.get()
    assert last["X-Video-Id"] == str(video.pk)
    assert video.title == "match" and video.original_name == "match.mp4" and video.size_bytes == len(data)
    assert file_sha256(video.original.path) == hashlib.sha256(data).hexdigest()
    assert Job.objects.get(pk=int(last["X-Job-Id"])).video == video
    state = client.get(url).json()
    assert state["complete"] and state["video"]["id"] == video.pk and state["job"]["id"] == int(last["X-Job-Id"])
    assert patch(client, url, len(data), b"x").status_code == 409  # complete: nothing more


@pytest.mark.django_db
def test_the_protocol_version_offset_and_type_are_checked(maintainer):
    client = client_for(maintainer)
    url = create(client, 10)["Location"]
    no_version = client.generic("PATCH", url, b"x", content_type=OFFSET_TYPE, HTTP_UPLOAD_OFFSET="0")
    assert no_version.status_code == 412 and no_version.json()["error"]["code"] == "tus_version"
    wrong_type = client.generic("PATCH", url, b"x", content_type="text/plain", HTTP_UPLOAD_OFFSET="0", **TUS)
    assert wrong_type.status_code in (400, 415)
    too_long = patch(client, url, 0, b"x" * 11)
    assert too_long.status_code == 400
    for offset in ("²", "-1", "0x0", "١"):  # digits other than ASCII's are not a number of bytes
        bad = patch(client, url, offset, b"x")
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "Upload-Offset", (offset, bad.content[:200])
    assert client.head(url, **TUS)["Upload-Offset"] == "0"
    assert create(client, 0).status_code == 400
    assert create(client, 10, title="").status_code == 400
    assert client.delete(url, **TUS).status_code == 204
    assert not ResumableUpload.objects.exists()


@pytest.mark.django_db
def test_an_upload_is_its_maintainers_own(maintainer, annotator_a, synthetic_source):
    client = client_for(maintainer)
    url = create(client, 10)["Location"]
    assert client_for(annotator_a).head(url, **TUS).status_code == 404
    assert create(client_for(annotator_a), 10).status_code == 404
    assert Client().head(url, **TUS).status_code in (403, 404)


def send_piece(port: int, key: str, token: str, offset: int, piece: bytes, *, cut_after: int | None = None):
    """PATCH one piece over a raw socket; with ``cut_after``, close after that many bytes."""
    head = (
        f"PATCH /api/uploads/{key}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {token}\r\n"
        f"Tus-Resumable: 1.0.0\r\nUpload-Offset: {offset}\r\nContent-Type: {OFFSET_TYPE}\r\n"
        f"Content-Length: {len(piece)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head + piece[: cut_after if cut_after is not None else len(piece)])
        if cut_after is not None:
            sock.shutdown(socket.SHUT_RDWR)  # the connection drops mid-piece
            return None
        return read_response(sock, timeout=120)


def raw(port: int, method: str, path: str, token: str, *headers: str) -> tuple[int, dict, bytes]:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Token {token}", "Tus-Resumable: 1.0.0"]
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode())
        response = read_response(sock, timeout=30)
    head, _, body = response.partition(b"\r\n\r\n")
    first, *rest = head.decode("latin-1").split("\r\n")
    fields = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in rest)}
    return int(first.split()[1]), fields, body


def upload_with_a_cut(port: int, token: str, data: bytes, metadata: str) -> str:
    """Create an upload of ``data``, send half of it in two whole pieces, drop the third
    piece's connection half way through, check the server's offset is where the last whole
    piece ended, then resume from that offset to the end. Returns the upload's key."""
    length = len(data)
    status, _, body = raw(
        port, "POST", "/api/uploads/", token, f"Upload-Length: {length}", f"Upload-Metadata: {metadata}",
        "Content-Length: 0",
    )  # fmt: skip
    assert status == 201
    key = json.loads(body)["key"]
    piece = -(-length // 4)
    offset = 0
    for _ in range(2):  # 50 % in two whole pieces ...
        send_piece(port, key, token, offset, data[offset : offset + piece])
        offset = min(length, offset + piece)
    # ... then the third piece's connection drops half way through.
    send_piece(port, key, token, offset, data[offset : offset + piece], cut_after=piece // 2)
    status, fields, _ = raw(port, "HEAD", f"/api/uploads/{key}/", token)
    assert status == 200 and int(fields["upload-offset"]) == offset == 2 * piece  # where it stopped
    while offset < length:  # resume from the server's offset
        response = send_piece(port, key, token, offset, data[offset : offset + piece])
        assert response.startswith(b"HTTP/1.1 204"), response[:300]
        offset = min(length, offset + piece)
    return key


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("front", ["embedded", "nginx"])
def test_a_connection_cut_at_50_percent_resumes_and_the_stored_file_is_the_source(
    embedded, maintainer, synthetic_source, eager_celery, tmp_path, front
):
    # "nginx": the production topology's front (deploy/nginx.py's configuration), which
    # streams each piece to the web process unbuffered and passes the cut on.
    if front == "nginx" and not HAVE_NGINX:
        pytest.skip("nginx is not installed (deploy/image-setup installs it)")
    source = synthetic_source("h264-24-gop250")
    data = source.read_bytes()
    token = do_issue_token(maintainer)[1]
    port, _ = embedded()
    length = len(data)
    metadata = f"filename {b64(source.name)},title {b64('resumed')}"
    if front == "nginx":
        with nginx_front(port, tmp_path / "nginx") as (nginx_port, _):
            upload_with_a_cut(nginx_port, token, data, metadata)
    else:
        upload_with_a_cut(port, token, data, metadata)
    video = Video.objects.get(title="resumed")
    assert file_sha256(video.original.path) == hashlib.sha256(data).hexdigest()
    assert video.size_bytes == length
    # The ingest ran (eager Celery in the server): its own hash of the source agrees.
    video.refresh_from_db()
    assert video.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.django_db
def test_an_unfinished_upload_untouched_for_a_day_is_removed_by_the_sweep(maintainer, settings):
    from datetime import timedelta

    from django.utils import timezone

    from annotator.actions.uploads import do_expire_uploads, part_path
    from annotator.entry.tasks import ingest_sweep

    client = client_for(maintainer)
    url = create(client, 10)["Location"]
    assert patch(client, url, 0, b"12345").status_code == 204
    upload = ResumableUpload.objects.get()
    assert part_path(upload).exists()
    assert ingest_sweep() == {}  # fresh: kept
    assert do_expire_uploads(
        now=timezone.now() + timedelta(seconds=settings.FRAMELEDGER_UPLOAD_EXPIRE_SECONDS + 1)
    ) == [upload.key]
    assert not ResumableUpload.objects.exists() and not part_path(upload).exists()
