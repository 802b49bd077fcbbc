"""A video's files against the hashes its ingest recorded (``annotator.reads.sealed_media``):
a frame table changed on disk is refused whenever it is served (it maps every frozen frame
number to a picture), a rendition's hash column changed is refused on serve, and
``verify_integrity --media`` hashes every file in full and names what changed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from annotator.models import Video
from tests.integrity.tampering import tamper

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def verify_media() -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_integrity", "--no-record", "--media", stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def assert_refused(client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 500, (url, response.status_code)
    assert response["X-FrameLedger-Error"] == "integrity_error", url


@pytest.fixture
def packet(media_packet):
    return media_packet("h264-2997-gop12")


def test_untouched_media_serve_and_verify(packet, annotator_a):
    assert client_of(annotator_a).get(f"/media/packets/{packet.pk}/frames.json").status_code == 200
    code, out = verify_media()
    assert code == 0, out


def test_a_frame_table_changed_on_disk_is_refused_on_serve_and_named(packet, annotator_a):
    video = Video.objects.get(pk=packet.video_id)
    path = video.frame_table.path
    with open(path, "rb") as fh:
        text = fh.read()
    with open(path, "wb") as fh:  # another frame <-> time mapping, same length
        fh.write(text.replace(b"1001", b"1002", 1))
    client = client_of(annotator_a)
    for endpoint in ("frames.json", "frames/3.png", "proxy.mp4"):
        assert_refused(client, f"/media/packets/{packet.pk}/{endpoint}")
    code, out = verify_media()
    assert code == 1 and f"PROBLEM video {video.pk}: its frame table (frames.json) differs" in out, out


def test_a_corrupted_proxy_is_named_by_the_full_check(packet, annotator_a):
    video = Video.objects.get(pk=packet.video_id)
    with open(video.proxy.path, "r+b") as fh:
        fh.seek(2000)
        byte = fh.read(1)
        fh.seek(2000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    code, out = verify_media()
    assert code == 1 and f"PROBLEM video {video.pk}: its proxy file differs from the one its ingest recorded" in out
    # and a proxy hash column made to match the corrupted file is refused on serve
    tamper(video, proxy_sha256="0" * 64)
    assert_refused(client_of(annotator_a), f"/media/packets/{packet.pk}/proxy.mp4")
