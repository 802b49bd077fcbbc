"""Every legal interval is scored, and the scores equal a brute-force loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.grid import Grid
from retrieval.scan import (
    MAX_FINE_CANDIDATES,
    dense_scores,
    interval_scores,
    likelihood_terms,
    merge_candidates,
    row_champions,
    select_candidates,
    zero_shot_terms,
)
from tests.retrieval.conftest import requires_gpu

GRIDS = [
    Grid.from_step(2, 30.96),  # uniform, short last segment
    Grid.from_step(1, 12),  # uniform
    Grid.from_points([0, 1, 1.5, 4, 7, 7.2, 9]),  # explicit, non-uniform
    Grid.from_step(0.5, 0.7),  # three points
    Grid.from_step(5, 5),  # two points: one interval
]


def brute_zero_shot(sim: np.ndarray, times: np.ndarray, gamma: float) -> np.ndarray:
    """S(a, b) = (sum of centred duration-weighted similarity inside) / (L (D - L) / D) ** gamma."""
    g = len(times)
    span = times[-1] - times[0]
    dur = np.diff(times)
    mean = (sim * dur).sum() / dur.sum()
    out = np.full((g, g), -np.inf)
    for a in range(g):
        for b in range(a + 1, g):
            inside = sum((sim[j] - mean) * dur[j] for j in range(a, b))
            length = times[b] - times[a]
            out[a, b] = inside / max(length * (span - length) / span, dur.min() / 2) ** gamma
    return out


def brute_likelihood(seg: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    g = len(start)
    out = np.full((g, g), -np.inf)
    for a in range(g):
        for b in range(a + 1, g):
            out[a, b] = seg[a:b].sum() + start[a] + end[b]
    return out


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: f"G{g.n_points}-step{g.step}")
@pytest.mark.parametrize("gamma", [0.5, 0.7, 1.0])
def test_all_interval_zero_shot_scores_equal_a_brute_force_loop(grid, gamma):
    sim = np.random.default_rng(grid.n_points).normal(size=grid.n_segments)
    terms = zero_shot_terms(torch.tensor(sim), torch.tensor(grid.times), gamma=gamma, step=grid.step)
    got = dense_scores(terms).double().numpy()
    want = brute_zero_shot(sim, grid.times, gamma)
    assert np.array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: f"G{g.n_points}")
@pytest.mark.parametrize("block", [1, 2, 5, 512])
def test_row_champions_are_the_brute_force_best_end_of_every_start(grid, block):
    rng = np.random.default_rng(7)
    sim = rng.normal(size=grid.n_segments)
    terms = zero_shot_terms(torch.tensor(sim), torch.tensor(grid.times), gamma=0.7, step=grid.step)
    champions = row_champions(terms, block=block)
    want = brute_zero_shot(sim, grid.times, 0.7)[:-1]
    np.testing.assert_allclose(champions.scores.numpy(), want.max(axis=1), atol=1e-4)
    np.testing.assert_array_equal(champions.ends.numpy(), want.argmax(axis=1))
    assert champions.n_scored == grid.n_intervals


def test_likelihood_scores_equal_a_brute_force_loop():
    grid = Grid.from_points([0, 2, 3, 3.5, 6, 8, 11, 12])
    rng = np.random.default_rng(3)
    seg, start, end = rng.normal(size=7), rng.normal(size=8), rng.normal(size=8)
    terms = likelihood_terms(torch.tensor(seg), torch.tensor(start), torch.tensor(end), torch.tensor(grid.times))
    want = brute_likelihood(seg, start, end)
    got = dense_scores(terms).double().numpy()
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], atol=1e-5)
    champions = row_champions(terms, block=3)
    np.testing.assert_array_equal(champions.ends.numpy(), want[:-1].argmax(axis=1))


@settings(max_examples=40, deadline=None)
@given(
    gaps=st.lists(st.sampled_from([0.5, 1.0, 2.0, 2.5]), min_size=1, max_size=16),
    seed=st.integers(0, 10_000),
    uniform=st.booleans(),
)
def test_scan_matches_brute_force_on_random_grids(gaps, seed, uniform):
    if uniform:
        gaps = [gaps[0]] * len(gaps)
    grid = Grid(np.concatenate([[0.0], np.cumsum(gaps)]))
    sim = np.random.default_rng(seed).normal(size=grid.n_segments)
    terms = zero_shot_terms(torch.tensor(sim), torch.tensor(grid.times), gamma=0.5, step=grid.step)
    want = brute_zero_shot(sim, grid.times, 0.5)
    champions = row_champions(terms, block=3)
    np.testing.assert_allclose(champions.scores.numpy(), want[:-1].max(axis=1), atol=1e-4)
    starts = torch.arange(grid.n_segments)
    np.testing.assert_allclose(interval_scores(terms, starts, champions.ends).numpy(), want[:-1].max(axis=1), atol=1e-4)


def test_candidates_are_at_most_64_legal_intervals_best_first():
    grid = Grid.from_step(2, 600)
    sim = torch.tensor(np.random.default_rng(1).normal(size=grid.n_segments))
    terms = zero_shot_terms(sim, torch.tensor(grid.times), step=grid.step)
    champions = row_champions(terms)
    cands = select_candidates(champions, grid.times, k=500)
    assert len(cands) == MAX_FINE_CANDIDATES
    assert np.all(cands.starts < cands.ends) and np.all(cands.ends < grid.n_points)
    assert np.all(np.diff(cands.scores) <= 0)
    assert cands.scores[0] == pytest.approx(float(champions.scores.max()))
    thinned = select_candidates(champions, grid.times, k=64, nms_iou=0.5)
    assert 0 < len(thinned) <= 64


def test_merged_candidates_have_no_repeats_and_keep_each_scan_best():
    grid = Grid.from_step(1, 200)
    rng = np.random.default_rng(5)
    times = torch.tensor(grid.times)
    a = row_champions(zero_shot_terms(torch.tensor(rng.normal(size=200)), times, step=1.0))
    b = row_champions(zero_shot_terms(torch.tensor(rng.normal(size=200)), times, step=1.0))
    merged = merge_candidates([a, b], grid.times)
    pairs = list(zip(merged.starts.tolist(), merged.ends.tolist(), strict=True))
    assert len(pairs) == len(set(pairs)) <= 64
    for champ in (a, b):
        best = int(champ.scores.argmax())
        assert (best, int(champ.ends[best])) in pairs


def test_two_hour_video_on_a_two_second_grid_scores_every_interval():
    grid = Grid.from_step(2, 7200)
    sim = torch.randn(grid.n_segments, generator=torch.Generator().manual_seed(0))
    champions = row_champions(zero_shot_terms(sim, torch.tensor(grid.times), step=grid.step))
    assert champions.n_scored == 3601 * 3600 // 2
    assert torch.isfinite(champions.scores).all()


@pytest.mark.gpu
@requires_gpu
def test_cuda_scan_equals_cpu_scan():
    grid = Grid.from_step(2, 3000)
    sim = torch.randn(grid.n_segments, generator=torch.Generator().manual_seed(0))
    cpu = row_champions(zero_shot_terms(sim, torch.tensor(grid.times), step=grid.step))
    gpu = row_champions(zero_shot_terms(sim.cuda(), torch.tensor(grid.times).cuda(), step=grid.step))
    torch.testing.assert_close(gpu.scores.cpu(), cpu.scores, atol=1e-3, rtol=1e-4)
    assert (gpu.ends.cpu() == cpu.ends).float().mean() > 0.99
