"""The app's moment-search ranking (``annotator.reads.search.rank_intervals``) on planted
patterns: grid-legal, best first, top-k, non-maximum suppression, and "find similar"
finding the other occurrence while leaving the example itself out."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from annotator.reads.search import NMS_IOU, example_vector, rank_intervals
from retrieval.features import frame_edges, l2_normalize, resample_to_segments
from retrieval.grid import Grid, iou

DURATION, CLIP, DIM = 600.0, 1.0, 64
PLANTED = [(100, 120), (400, 420)]


@pytest.fixture(scope="module")
def video():
    rng = np.random.default_rng(7)
    pattern = l2_normalize(rng.standard_normal(DIM))
    clips = rng.standard_normal((int(DURATION / CLIP), DIM)).astype(np.float32)
    for a, b in PLANTED:
        clips[a:b] += 4.0 * pattern * np.sqrt(DIM)
    grid = Grid.from_step(2.0, DURATION)
    segments = resample_to_segments(clips, frame_edges(len(clips), DURATION, CLIP), grid.times)
    return torch.from_numpy(segments), torch.from_numpy(np.array(grid.times)), grid, pattern


def test_a_text_like_query_finds_both_occurrences_first_on_the_grid(video):
    segments, times, grid, pattern = video
    found, scored = rank_intervals(segments, times, grid, pattern, k=10)
    assert scored == 301 * 300 // 2  # every legal interval of the 2 s grid
    assert 1 <= len(found) <= 10
    top = sorted(found[:2])
    assert [round(iou(t[:2], p), 2) >= 0.8 for t, p in zip(top, PLANTED, strict=True)] == [True, True], found[:3]
    assert [f[2] for f in found] == sorted((f[2] for f in found), reverse=True)
    for start, end, _ in found:
        assert grid.is_legal(start, end)
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            assert iou(a[:2], b[:2]) <= NMS_IOU


def test_k_limits_the_list(video):
    segments, times, grid, pattern = video
    assert len(rank_intervals(segments, times, grid, pattern, k=3)[0]) == 3
    assert len(rank_intervals(segments, times, grid, pattern, k=1)[0]) == 1


def test_find_similar_finds_the_other_occurrence_and_leaves_the_example_out(video):
    segments, times, grid, _ = video
    query, a, b = example_vector(segments, grid, 100.3, 119.6)
    assert (a, b) == (100.0, 120.0)  # snapped to the nearest grid points
    found, _ = rank_intervals(segments, times, grid, query, k=5, example_span=(a, b))
    assert iou(found[0][:2], PLANTED[1]) >= 0.8, found
    for start, end, _ in found:
        inside = max(0.0, min(end, b) - max(start, a)) / (end - start)
        assert iou((start, end), (a, b)) < 0.5 and inside < 0.5


def test_an_example_of_one_grid_step_or_less_still_has_a_segment(video):
    segments, _, grid, _ = video
    query, a, b = example_vector(segments, grid, 50.2, 50.4)
    assert b - a == 2.0 and np.isclose(np.linalg.norm(query), 1.0)
