"""Uploaded arrays (``.npy``, ``.npz``) are judged under the caps of every archive upload
without being loaded: a header that claims 10^16 floats and a small ``.npz`` that inflates
to hundreds of MiB are 400s naming the field, with the request's allocations flat
(``tracemalloc`` sees numpy's); the worker judges a file the same way before it loads it."""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from numpy.lib import format as npy_format

from annotator.actions.search import do_build_search_index
from annotator.models import VideoSearchIndex
from tests.factories import client_for, make_packet, make_ready_video

MiB = 1024 * 1024
FLAT = 32 * MiB  # what one request may allocate at its peak, bombs included


def npz_bomb(members: dict[str, tuple[tuple[int, ...], str]]) -> bytes:
    """An .npz whose members are zeros of the given shapes, deflated as they stream (never
    held whole here either)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for key, (shape, dtype) in members.items():
            with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                member.write(header_only_for(shape, dtype))
                left = int(np.prod(shape)) * np.dtype(dtype).itemsize
                zeros = bytes(MiB)
                while left > 0:
                    member.write(zeros[: min(MiB, left)])
                    left -= MiB
    return out.getvalue()


def header_only_for(shape, dtype) -> bytes:
    buffer = io.BytesIO()
    npy_format.write_array_header_1_0(buffer, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
    value = buffer.getvalue()
    return value if value.startswith(b"\x93NUMPY") else npy_format.magic(1, 0) + value


@pytest.fixture
def video_url(maintainer, annotator_a, annotator_b, adjudicator):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
                         video=make_ready_video("caps", frame_count=30 * 60, fps=(30, 1)))  # fmt: skip
    return packet, f"/api/videos/{packet.video_id}/search-index/"


def post(client, url, files: dict[str, tuple[str, bytes]]):
    body = {"clip_length": "2"}
    for field, (name, data) in files.items():
        upload = io.BytesIO(data)
        upload.name = name
        body[field] = upload
    tracemalloc.start()
    try:
        response = client.post(url, body, format="multipart")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return response, peak


@pytest.mark.django_db
def test_an_npy_header_claiming_ten_to_the_sixteen_floats_is_a_400_before_any_read(maintainer, video_url):
    _, url = video_url
    data = header_only_for((10**8, 10**8), "<f4") + bytes(64)
    response, peak = post(client_for(maintainer), url, {"features": ("v.npy", data)})
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == "features" and "rows declared" in response.json()["error"]["message"]
    assert peak < FLAT


@pytest.mark.django_db
def test_a_small_npz_that_inflates_to_hundreds_of_mib_is_a_400_with_memory_flat(maintainer, video_url):
    packet, url = video_url
    bomb = npz_bomb({"features": ((65536, 1024), "<f4")})  # 256 MiB of zeros
    assert len(bomb) < 2 * MiB
    response, peak = post(client_for(maintainer), url, {"features": ("v.npz", bomb)})
    assert response.status_code == 400 and response.json()["error"]["field"] == "features", response.content
    assert peak < FLAT + 2 * len(bomb)
    assert not VideoSearchIndex.objects.filter(video=packet.video).exclude(features_upload="").exists()


@pytest.mark.django_db
def test_a_text_features_bomb_is_a_400_naming_text_features(maintainer, video_url):
    _, url = video_url
    features = io.BytesIO()
    np.save(features, np.ones((30, 8), np.float32))
    bomb = npz_bomb({"texts": ((10,), "<U8"), "embeddings": ((32768, 2048), "<f4")})
    files = {"features": ("v.npy", features.getvalue()), "text_features": ("t.npz", bomb)}
    response, peak = post(client_for(maintainer), url, files)
    assert response.status_code == 400 and response.json()["error"]["field"] == "text_features", response.content
    assert peak < FLAT + 2 * len(bomb)


@pytest.mark.django_db
def test_features_within_the_caps_are_streamed_and_a_nan_deep_inside_is_found(maintainer, video_url):
    _, url = video_url
    values = np.random.default_rng(7).normal(size=(3000, 512)).astype(np.float32)  # 6 MiB: several chunks
    values[2999, 511] = np.nan
    buffer = io.BytesIO()
    np.savez_compressed(buffer, features=values)
    response, _ = post(client_for(maintainer), url, {"features": ("v.npz", buffer.getvalue())})
    assert response.status_code == 400 and "finite" in response.json()["error"]["message"]
    values[2999, 511] = 0.5
    buffer = io.BytesIO()
    np.savez_compressed(buffer, features=values)
    response, _ = post(client_for(maintainer), url, {"features": ("v.npz", buffer.getvalue())})
    assert response.status_code == 202, response.content


@pytest.mark.django_db
def test_the_worker_judges_packet_features_by_the_same_caps_before_loading_them(
    maintainer, annotator_a, annotator_b, adjudicator
):
    folder = Path(settings.MEDIA_ROOT) / "features"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bomb.npz").write_bytes(npz_bomb({"features": ((65536, 1024), "<f4")}))
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
                         video=make_ready_video("bomb", frame_count=30 * 60, fps=(30, 1)),
                         parameters={"features": "features/bomb.npz", "clip_length": 2.0})  # fmt: skip
    import retrieval.features  # noqa: F401  (its imports are not the build's cost)

    tracemalloc.start()
    try:
        do_build_search_index(packet.video_id)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    row = VideoSearchIndex.objects.get(video=packet.video)
    assert row.status == "failed" and "may inflate to" in row.error, row.error
    assert peak < FLAT
