"""The barcode every synthetic frame carries, and the encodings written with it."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.base.media import synthetic
from tests.media.conftest import FRAME_COUNTS


@pytest.mark.parametrize("index", [0, 1, 2, 255, 1000, 25_691, 214_362, synthetic.MAX_INDEX])
def test_barcode_reads_back_the_index_it_was_drawn_with(index):
    assert synthetic.read_barcode(synthetic.render_frame(index)) == index


def test_barcode_reads_at_other_frame_sizes():
    for width, height in [(96, 64), (320, 180), (1280, 720)]:
        assert synthetic.read_barcode(synthetic.render_frame(12_345, width, height)) == 12_345


def test_barcode_check_row_rejects_a_damaged_cell():
    img = synthetic.render_frame(0b101010101010101010)
    x, y, w, h = synthetic.cell_boxes(160, 96)[3]  # a data cell
    img[y : y + h, x : x + w] = 255 - img[y : y + h, x : x + w]
    assert synthetic.read_barcode(img) is None


def test_barcode_rejects_a_blank_frame():
    assert synthetic.read_barcode(np.full((96, 160, 3), 128, np.uint8)) is None


def test_barcode_refuses_an_index_that_does_not_fit():
    with pytest.raises(synthetic.BarcodeOverflow):
        synthetic.render_frame(synthetic.MAX_INDEX + 1)


@pytest.mark.parametrize("name", sorted(FRAME_COUNTS))
def test_every_encoding_decodes_to_its_indices_in_order(synthetic_source, name):
    decoded = list(synthetic.iter_decoded_indices(synthetic_source(name)))
    indices = [index for _, index in decoded]
    if synthetic.ENCODINGS[name].rotation:
        # Stored sideways; readable only once the display rotation is applied (the proxy does).
        assert all(index is None for index in indices)
    else:
        assert indices == list(range(FRAME_COUNTS[name]))


def test_barcode_reads_over_a_textured_background():
    background = synthetic.texture(320, 192)
    for index in (0, 77, 199_999):
        frame = synthetic.render_frame(index, 320, 192, background)
        assert synthetic.read_barcode(frame) == index
    assert not np.array_equal(synthetic.render_frame(1, 320, 192, background), synthetic.render_frame(1, 320, 192))
