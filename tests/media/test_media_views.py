"""The media endpoints through the real URLconf: access, Range, exact frames, thumbnails."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.test import Client
from PIL import Image

from annotator.base.media import synthetic
from annotator.base.media.frametable import FrameTable
from annotator.models import Video

pytestmark = pytest.mark.django_db

ENDPOINTS = ["proxy.mp4", "frames.json", "frames/0.png", "frames/3.jpg", "thumbs.jpg", "thumbs.json"]


def client_of(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def packet_2997(media_packet):
    return media_packet("h264-2997-gop12")


def test_everyone_on_the_packet_gets_its_media(packet_2997, annotator_a, annotator_b, adjudicator, maintainer):
    for user in (annotator_a, annotator_b, adjudicator, maintainer):
        client = client_of(user)
        for endpoint in ENDPOINTS:
            response = client.get(f"/media/packets/{packet_2997.pk}/{endpoint}")
            assert response.status_code == 200, (user.username, endpoint)


@pytest.mark.parametrize("who", ["outsider", "anonymous"])
def test_outsiders_get_404_for_every_packet_media_endpoint(packet_2997, outsider, who):
    client = client_of(outsider if who == "outsider" else None)
    for endpoint in ENDPOINTS:
        response = client.get(f"/media/packets/{packet_2997.pk}/{endpoint}", headers={"Range": "bytes=0-99"})
        assert response.status_code == 404, endpoint
        assert b"ftyp" not in body(response)


def test_a_missing_packet_looks_like_a_hidden_one(packet_2997, outsider):
    hidden = client_of(outsider).get(f"/media/packets/{packet_2997.pk}/proxy.mp4")
    missing = client_of(outsider).get(f"/media/packets/{packet_2997.pk + 1000}/proxy.mp4")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content


def test_video_media_is_for_maintainers_only(packet_2997, maintainer, annotator_a, outsider):
    video_id = packet_2997.video_id
    assert client_of(maintainer).get(f"/media/videos/{video_id}/frames.json").status_code == 200
    for user in (annotator_a, outsider, None):
        for endpoint in ENDPOINTS:
            assert client_of(user).get(f"/media/videos/{video_id}/{endpoint}").status_code == 404


def test_proxy_answers_a_range_with_206_and_correct_headers(packet_2997, annotator_a):
    client = client_of(annotator_a)
    url = f"/media/packets/{packet_2997.pk}/proxy.mp4"
    whole = client.get(url)
    data = body(whole)
    size = len(data)
    assert whole["Accept-Ranges"] == "bytes" and whole["Content-Type"] == "video/mp4"
    assert whole["ETag"] == f'"{packet_2997.video.proxy_sha256}"'

    part = client.get(url, headers={"Range": "bytes=100-1099"})
    assert part.status_code == 206
    assert part["Content-Range"] == f"bytes 100-1099/{size}"
    assert part["Content-Length"] == "1000"
    assert part["Accept-Ranges"] == "bytes"
    assert body(part) == data[100:1100]

    tail = client.get(url, headers={"Range": "bytes=-500"})
    assert tail.status_code == 206 and body(tail) == data[-500:]


def test_proxy_if_range_honours_a_current_validator_only(packet_2997, annotator_a):
    client = client_of(annotator_a)
    url = f"/media/packets/{packet_2997.pk}/proxy.mp4"
    etag = client.head(url)["ETag"]
    assert client.get(url, headers={"Range": "bytes=0-9", "If-Range": etag}).status_code == 206
    stale = client.get(url, headers={"Range": "bytes=0-9", "If-Range": '"an-old-proxy"'})
    assert stale.status_code == 200 and "Content-Range" not in stale


def test_proxy_range_past_the_end_is_416(packet_2997, annotator_a):
    client = client_of(annotator_a)
    url = f"/media/packets/{packet_2997.pk}/proxy.mp4"
    size = int(client.head(url)["Content-Length"])
    response = client.get(url, headers={"Range": f"bytes={size}-"})
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{size}"


def test_frames_json_lists_every_frame(packet_2997, annotator_a):
    response = client_of(annotator_a).get(f"/media/packets/{packet_2997.pk}/frames.json")
    data = json.loads(body(response))
    assert response["Content-Type"] == "application/json"
    assert (data["fps_num"], data["fps_den"], data["frame_count"]) == (30000, 1001, 240)
    table = FrameTable.from_json(data)
    assert len(table.pts) == 240 and table.seconds(0) == 0.0
    assert table.seconds(239) == 239 * 1001 / 30000
    assert table.keyframes == tuple(range(0, 240, 12))


@pytest.mark.parametrize("name", ["h264-24-gop250", "h264-vfr-bframes", "vp9-webm", "h264-offset-1.5s"])
def test_exact_frame_endpoint_returns_the_barcode_of_n(media_packet, annotator_b, name):
    packet = media_packet(name)
    client = client_of(annotator_b)
    count = packet.video.frame_count
    for n in (0, 1, 13, 97, count - 2, count - 1):
        response = client.get(f"/media/packets/{packet.pk}/frames/{n}.png")
        assert response.status_code == 200 and response["Content-Type"] == "image/png"
        image = np.asarray(Image.open(io.BytesIO(response.content)).convert("RGB"))
        assert synthetic.read_barcode(image) == n
        assert response["X-Frame-Index"] == str(n)


def test_exact_frame_outside_the_video_is_404(packet_2997, annotator_a):
    client = client_of(annotator_a)
    assert client.get(f"/media/packets/{packet_2997.pk}/frames/240.png").status_code == 404
    assert client.get(f"/media/packets/{packet_2997.pk}/frames/239.png").status_code == 200


def test_exact_frame_revalidates_with_its_etag(packet_2997, annotator_a):
    client = client_of(annotator_a)
    url = f"/media/packets/{packet_2997.pk}/frames/5.jpg"
    first = client.get(url)
    assert first["Content-Type"] == "image/jpeg"
    again = client.get(url, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 304


def test_thumbnail_meta_points_at_the_sprite(packet_2997, adjudicator):
    client = client_of(adjudicator)
    meta = client.get(f"/media/packets/{packet_2997.pk}/thumbs.json").json()
    assert meta["sprite"] == f"/media/packets/{packet_2997.pk}/thumbs.jpg"
    assert meta["frames"][0] == 0 and meta["frames"][-1] == 239
    sprite = client.get(meta["sprite"])
    image = Image.open(io.BytesIO(body(sprite)))
    assert image.size == (meta["columns"] * meta["tile_width"], meta["rows"] * meta["tile_height"])


def test_media_of_a_video_that_is_not_ready_is_404(packet_2997, annotator_a):
    Video.objects.filter(pk=packet_2997.video_id).update(status=Video.Status.PROCESSING)
    for endpoint in ENDPOINTS:
        assert client_of(annotator_a).get(f"/media/packets/{packet_2997.pk}/{endpoint}").status_code == 404


def test_media_refuses_writes(packet_2997, annotator_a):
    assert client_of(annotator_a).post(f"/media/packets/{packet_2997.pk}/proxy.mp4").status_code == 405


def test_frames_json_is_gzipped_for_clients_that_accept_it_and_revalidates(packet_2997, annotator_a):
    import gzip

    client = client_of(annotator_a)
    url = f"/media/packets/{packet_2997.pk}/frames.json"
    plain = client.get(url)
    packed = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert "Content-Encoding" not in plain and packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    assert "Accept-Encoding" in plain["Vary"] and "Accept-Encoding" in packed["Vary"]
    assert plain["ETag"] != packed["ETag"]  # two representations, two tags
    for refusal in ("gzip;q=0, identity", "gzip; q=0.000", "identity"):
        refused = client.get(url, HTTP_ACCEPT_ENCODING=refusal)
        assert "Content-Encoding" not in refused and refused.content == plain.content, refusal
    again = client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=packed["ETag"])
    assert again.status_code == 304 and not again.content


def test_api_json_answers_are_gzipped_but_media_bytes_are_not(packet_2997, maintainer):
    import gzip

    client = client_of(maintainer)
    answer = client.get(f"/api/videos/{packet_2997.video_id}/", HTTP_ACCEPT_ENCODING="gzip")
    assert answer["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(answer.content))["id"] == packet_2997.video_id
    refused = client.get(f"/api/videos/{packet_2997.video_id}/", HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert "Content-Encoding" not in refused and refused.json()["id"] == packet_2997.video_id
    proxy = client.get(f"/media/videos/{packet_2997.video_id}/proxy.mp4", HTTP_ACCEPT_ENCODING="gzip")
    assert "Content-Encoding" not in proxy
