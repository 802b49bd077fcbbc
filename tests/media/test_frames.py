"""Exact frames by table-driven seeking, and the thumbnail sprite."""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image

from annotator.base.media import synthetic
from annotator.base.media.errors import FrameOutOfRange
from annotator.base.media.frames import FrameReader, frame_image
from annotator.base.media.thumbs import make_thumbnails, thumbnail_indices
from tests.media.conftest import FRAME_COUNTS


def barcode_of(frame) -> int | None:
    return synthetic.read_barcode(frame.to_ndarray(format="rgb24"))


@pytest.mark.parametrize("name", sorted(FRAME_COUNTS))
def test_reader_returns_exactly_the_frame_asked_for(proxy_of, name):
    proxy, table, _ = proxy_of(name)
    rng = random.Random(4)
    last = table.frame_count - 1
    indices = [0, 1, last - 1, last, *rng.sample(range(table.frame_count), 40), 5, 6, 7, 30, 29, 12, 11]
    with FrameReader(proxy, table) as reader:
        assert [barcode_of(reader.frame(i)) for i in indices] == indices


def test_reader_works_on_a_b_frame_source_too(synthetic_source):
    from annotator.base.media.frametable import build_frame_table

    path = synthetic_source("h264-24-gop250")
    table = build_frame_table(path)
    indices = [0, 249, 250, 251, 299, 17, 100, 3]
    with FrameReader(path, table) as reader:
        assert [barcode_of(reader.frame(i)) for i in indices] == indices


def test_reader_refuses_frames_outside_the_video(proxy_of):
    proxy, table, _ = proxy_of("h264-2997-gop12")
    with FrameReader(proxy, table) as reader:
        for bad in (-1, table.frame_count):
            with pytest.raises(FrameOutOfRange):
                reader.frame(bad)


def test_png_image_shows_the_frame(proxy_of):
    proxy, table, _ = proxy_of("vp9-webm")
    import numpy as np

    image = Image.open(io.BytesIO(frame_image(proxy, table, 123, "png")))
    assert image.format == "PNG"
    assert synthetic.read_barcode(np.asarray(image.convert("RGB"))) == 123


def test_thumbnail_indices_span_first_to_last():
    assert thumbnail_indices(1000, 5) == [0, 250, 500, 749, 999]
    assert thumbnail_indices(3, 100) == [0, 1, 2]
    assert thumbnail_indices(0) == []


def test_thumbnail_sprite_tiles_are_the_listed_frames(proxy_of, tmp_path):
    import numpy as np

    proxy, table, _ = proxy_of("h264-24-gop250")
    meta = make_thumbnails(proxy, table, tmp_path / "t.jpg", count=12, tile_width=160, columns=5)
    assert (meta["count"], meta["columns"], meta["rows"], meta["tile_height"]) == (12, 5, 3, 96)
    assert meta["frames"][0] == 0 and meta["frames"][-1] == table.frame_count - 1
    assert meta["times"] == [table.seconds(i) for i in meta["frames"]]
    sprite = np.asarray(Image.open(tmp_path / "t.jpg").convert("RGB"))
    assert sprite.shape == (3 * 96, 5 * 160, 3)
    for k, index in enumerate(meta["frames"]):
        row, col = divmod(k, 5)
        tile = sprite[row * 96 : (row + 1) * 96, col * 160 : (col + 1) * 160]
        assert synthetic.read_barcode(tile) == index
