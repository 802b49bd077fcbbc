"""Behind nginx (FRAMELEDGER_MEDIA_ACCEL_PREFIX set) the media views answer with
X-Accel-Redirect after the access check, and send no bytes themselves."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_proxy_is_handed_to_nginx_after_the_access_check(media_packet, annotator_a, outsider, settings):
    packet = media_packet("h264-2997-gop12")
    settings.FRAMELEDGER_MEDIA_ACCEL_PREFIX = "/_media/"
    client = Client()
    client.force_login(annotator_a)
    response = client.get(f"/media/packets/{packet.pk}/proxy.mp4", headers={"Range": "bytes=0-99"})
    assert response.status_code == 200
    video = packet.video
    relative = video.proxy.name
    assert response["X-Accel-Redirect"] == "/_media/" + relative
    assert response["Content-Type"] == "video/mp4"
    assert response.content == b""
    other = Client()
    other.force_login(outsider)
    hidden = other.get(f"/media/packets/{packet.pk}/proxy.mp4")
    assert hidden.status_code == 404 and "X-Accel-Redirect" not in hidden


def test_without_the_prefix_django_serves_the_range_itself(media_packet, annotator_a, settings):
    packet = media_packet("h264-2997-gop12")
    settings.FRAMELEDGER_MEDIA_ACCEL_PREFIX = ""
    client = Client()
    client.force_login(annotator_a)
    response = client.get(f"/media/packets/{packet.pk}/proxy.mp4", headers={"Range": "bytes=0-99"})
    assert response.status_code == 206 and "X-Accel-Redirect" not in response
    assert len(b"".join(response.streaming_content)) == 100
