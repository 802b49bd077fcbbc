"""The HTTP Range helper: 206, Content-Range, If-Range, 416, 304, HEAD, ASGI streaming."""

from __future__ import annotations

import asyncio
import os

import pytest
from django.test import AsyncRequestFactory, RequestFactory
from django.utils.http import http_date

from annotator.base.media.ranges import file_etag, ranged_file_response

DATA = bytes(range(256)) * 40  # 10,240 bytes
SIZE = len(DATA)


@pytest.fixture
def blob(tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(DATA)
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def get(blob, method="get", **headers):
    request = getattr(RequestFactory(), method)("/x", headers=headers)
    return ranged_file_response(request, blob, "application/octet-stream")


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_no_range_sends_the_whole_file_and_advertises_ranges(blob):
    response = get(blob)
    assert response.status_code == 200
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Length"] == str(SIZE)
    assert response["ETag"] == file_etag(blob)
    assert response["Last-Modified"] == http_date(1_700_000_000)
    assert body(response) == DATA


@pytest.mark.parametrize(
    ("header", "first", "last"),
    [
        ("bytes=0-0", 0, 0),
        ("bytes=100-199", 100, 199),
        ("bytes=10000-", 10000, SIZE - 1),
        ("bytes=-240", SIZE - 240, SIZE - 1),
        ("bytes=10000-99999", 10000, SIZE - 1),  # end past the file: clipped
        ("bytes=-99999", 0, SIZE - 1),  # suffix longer than the file: all of it
        ("BYTES = 5 - 9", 5, 9),
    ],
)
def test_one_range_is_answered_with_206_and_its_bytes(blob, header, first, last):
    response = get(blob, Range=header)
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {first}-{last}/{SIZE}"
    assert response["Content-Length"] == str(last - first + 1)
    assert response["Accept-Ranges"] == "bytes"
    assert body(response) == DATA[first : last + 1]


@pytest.mark.parametrize("header", ["bytes=10240-", "bytes=20000-20010", "bytes=-0"])
def test_unsatisfiable_range_is_416_with_the_size(blob, header):
    response = get(blob, Range=header)
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{SIZE}"


@pytest.mark.parametrize("header", ["bytes=abc", "items=0-10", "bytes=9-5", "bytes=-", "bytes 0-10"])
def test_malformed_range_is_ignored(blob, header):
    response = get(blob, Range=header)
    assert response.status_code == 200
    assert body(response) == DATA


def test_several_ranges_get_the_whole_file_with_200(blob):
    response = get(blob, Range="bytes=0-1,5-6")
    assert response.status_code == 200
    assert "Content-Range" not in response
    assert body(response) == DATA


def test_if_range_with_the_current_etag_honours_the_range(blob):
    response = get(blob, Range="bytes=0-9", If_Range=file_etag(blob))
    assert response.status_code == 206
    assert body(response) == DATA[:10]


def test_if_range_with_another_etag_sends_the_whole_new_file(blob):
    response = get(blob, Range="bytes=0-9", If_Range='"an-older-version"')
    assert response.status_code == 200
    assert body(response) == DATA


def test_if_range_with_a_weak_etag_never_matches(blob):
    response = get(blob, Range="bytes=0-9", If_Range=f"W/{file_etag(blob)}")
    assert response.status_code == 200


def test_if_range_with_the_exact_last_modified_date_honours_the_range(blob):
    assert get(blob, Range="bytes=0-9", If_Range=http_date(1_700_000_000)).status_code == 206
    assert get(blob, Range="bytes=0-9", If_Range=http_date(1_600_000_000)).status_code == 200


def test_if_range_that_matches_still_gives_416_for_a_bad_range(blob):
    response = get(blob, Range="bytes=99999-", If_Range=file_etag(blob))
    assert response.status_code == 416


def test_etag_changes_when_the_file_changes(blob):
    before = file_etag(blob)
    blob.write_bytes(DATA + b"!")
    assert file_etag(blob) != before


def test_if_none_match_gives_304(blob):
    response = get(blob, If_None_Match=file_etag(blob))
    assert response.status_code == 304
    assert response["ETag"] == file_etag(blob)
    assert get(blob, If_None_Match='"other"').status_code == 200


def test_head_has_the_headers_and_no_body(blob):
    response = get(blob, method="head", Range="bytes=5-14")
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 5-14/{SIZE}"
    assert response["Content-Length"] == "10"
    assert response.content == b""


def test_given_etag_is_used(tmp_path, blob):
    request = RequestFactory().get("/x", headers={"Range": "bytes=0-3", "If-Range": '"abc"'})
    response = ranged_file_response(request, blob, "video/mp4", etag='"abc"')
    assert response.status_code == 206 and response["ETag"] == '"abc"'


def test_asgi_requests_get_an_async_stream(blob):
    request = AsyncRequestFactory().get("/x", headers={"Range": "bytes=1000-"})
    response = ranged_file_response(request, blob, "video/mp4")
    assert response.status_code == 206
    assert response.is_async

    async def collect():
        return b"".join([chunk async for chunk in response])

    assert asyncio.run(collect()) == DATA[1000:]


def test_an_open_range_is_answered_with_at_most_the_configured_bytes(blob, settings):
    settings.FRAMELEDGER_MEDIA_RANGE_BYTES = 1000
    response = get(blob, Range="bytes=100-")
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 100-1099/{SIZE}"
    assert response["Content-Length"] == "1000"
    assert body(response) == DATA[100:1100]
    near_end = get(blob, Range=f"bytes={SIZE - 10}-")  # the rest is shorter than the cap
    assert near_end["Content-Range"] == f"bytes {SIZE - 10}-{SIZE - 1}/{SIZE}"
    closed = get(blob, Range="bytes=0-4999")  # a closed range is answered as asked
    assert closed["Content-Range"] == f"bytes 0-4999/{SIZE}"
    suffix = get(blob, Range="bytes=-4000")
    assert suffix["Content-Range"] == f"bytes {SIZE - 4000}-{SIZE - 1}/{SIZE}"
