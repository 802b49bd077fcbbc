"""The closed-form grid normaliser equals brute force over every pair of grid points."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.moments import (
    best_grid_interval,
    best_grid_iou,
    best_iou,
    brute_force_best_grid_iou,
    grid_from_step,
)

times = st.floats(min_value=-5, max_value=60, allow_nan=False, allow_infinity=False)
grids = st.lists(times, min_size=0, max_size=24, unique=True).map(sorted)
intervals = st.lists(
    st.tuples(times, times).filter(lambda pair: pair[0] != pair[1]).map(lambda pair: tuple(sorted(pair))),
    min_size=0,
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(grid=grids, acceptable=intervals)
def test_closed_form_equals_brute_force_on_random_grids(grid, acceptable):
    assert best_grid_iou(grid, acceptable) == brute_force_best_grid_iou(grid, acceptable)


@settings(max_examples=60, deadline=None)
@given(
    step=st.sampled_from([0.5, 1, 2, 2.5, 3]),
    duration=st.integers(min_value=1, max_value=40),
    acceptable=st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 40))
        .filter(lambda pair: pair[0] != pair[1])
        .map(lambda pair: tuple(sorted(pair))),
        min_size=1,
        max_size=3,
    ),
)
def test_closed_form_equals_brute_force_on_step_grids(step, duration, acceptable):
    grid = grid_from_step(duration, step)
    assert best_grid_iou(grid, acceptable) == brute_force_best_grid_iou(grid, acceptable)


@settings(max_examples=60, deadline=None)
@given(grid=grids, acceptable=intervals)
def test_the_witness_is_a_legal_grid_interval_reaching_the_optimum(grid, acceptable):
    best, witness = best_grid_interval(grid, acceptable)
    if witness is None:
        assert best == 0
        return
    start, end = witness
    assert start in grid and end in grid and start < end
    assert best_iou(start, end, acceptable) == best


def test_a_hand_computed_normaliser():
    # grid 0, 2, 4, 6: the best legal interval for [3, 5] is [2, 6] (IoU 1/2) or
    # [2, 4] / [4, 6] (IoU 1/3).
    assert best_grid_iou([0, 2, 4, 6], [(3, 5)]) == Fraction(1, 2)
    assert best_grid_iou([0, 2], [(5, 9)]) == 0
