"""The embedded low-level descriptor (``retrieval.descriptor``): shapes, invariances,
and that it separates what looks different, which is all query-by-example needs."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.descriptor import DIM, clip_descriptors, fill_gaps, frame_descriptor
from retrieval.features import l2_normalize


def flat(rgb, h=36, w=64):
    return np.broadcast_to(np.array(rgb, dtype=np.uint8), (h, w, 3)).copy()


def stripes(h=36, w=64, vertical=True):
    image = np.zeros((h, w, 3), dtype=np.uint8)
    if vertical:
        image[:, ::4] = 255
    else:
        image[::4, :] = 255
    return image


def cosine(a, b):
    return float(l2_normalize(a) @ l2_normalize(b))


def test_one_frame_gives_dim_finite_values_and_the_same_frame_the_same_vector():
    frame = np.random.default_rng(0).integers(0, 256, (36, 64, 3), dtype=np.uint8)
    vector = frame_descriptor(frame)
    assert vector.shape == (DIM,) and vector.dtype == np.float32 and np.all(np.isfinite(vector))
    assert np.array_equal(vector, frame_descriptor(frame.copy()))
    assert np.all(np.isfinite(frame_descriptor(flat((0, 0, 0)))))  # no gradient at all: no NaN


def test_colour_and_texture_are_told_apart():
    red, red2, blue = (
        frame_descriptor(flat((220, 30, 30))),
        frame_descriptor(flat((210, 35, 40))),
        frame_descriptor(flat((30, 30, 220))),
    )
    assert cosine(red, red2) > 0.99
    assert cosine(red, blue) < cosine(red, red2) - 0.3
    vertical, horizontal = frame_descriptor(stripes(vertical=True)), frame_descriptor(stripes(vertical=False))
    assert cosine(vertical, frame_descriptor(stripes(vertical=True))) == pytest.approx(1.0, abs=1e-6)
    assert cosine(vertical, horizontal) < 0.9  # same colours, other orientation


def test_the_size_of_the_frame_hardly_matters():
    small = frame_descriptor(flat((200, 120, 40), 36, 64))
    large = frame_descriptor(flat((200, 120, 40), 72, 128))
    assert cosine(small, large) > 0.999


def test_clips_average_their_frames_and_an_empty_clip_copies_its_neighbour():
    frames = np.stack([flat((255, 0, 0)), flat((255, 0, 0)), flat((0, 0, 255))])
    clips = clip_descriptors(frames, np.array([0.1, 0.6, 2.2]), clip_length=1.0, duration=3.5)
    assert clips.shape == (4, DIM)  # 0-1, 1-2 (empty), 2-3, 3-3.5 (empty)
    assert np.allclose(clips[0], frame_descriptor(flat((255, 0, 0))), atol=1e-6)
    assert np.array_equal(clips[1], clips[0]) and np.array_equal(clips[3], clips[2])
    with pytest.raises(ValueError):
        clip_descriptors(frames, np.array([0.1, 0.2]), clip_length=1.0, duration=3.0)
    with pytest.raises(ValueError):
        fill_gaps(np.zeros((2, DIM)), np.zeros(2, dtype=np.int64))


def test_wrong_shapes_are_refused():
    with pytest.raises(ValueError):
        frame_descriptor(np.zeros((36, 64), dtype=np.uint8))
    with pytest.raises(ValueError):
        clip_descriptors(np.zeros((1, 4, 4, 3), np.uint8), np.array([0.0]), clip_length=0, duration=1)
