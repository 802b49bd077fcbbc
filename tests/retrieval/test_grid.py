"""Grid maths: expansion of the corpus grid forms, legality, grid-optimal intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.grid import Grid, GridError, iou


def test_step_grid_appends_the_duration_when_it_is_not_a_multiple():
    g = Grid.from_spec({"step": 1}, 30.96)
    assert g.times[0] == 0.0 and g.times[-2] == 30.0 and g.times[-1] == 30.96
    assert g.n_points == 32 and g.step == 1.0


def test_step_grid_ends_on_the_duration_when_it_is_a_multiple():
    g = Grid.from_spec({"step": 2}, 150)
    assert g.n_points == 76 and g.times[-1] == 150.0


def test_step_grid_points_carry_no_binary_noise():
    g = Grid.from_step(0.1, 1.0)
    assert g.times[3] == 0.3 and g.times[-1] == 1.0 and g.n_points == 11


def test_explicit_grid_is_kept_as_given_and_detected_non_uniform():
    g = Grid.from_spec([0, 1, 1.5, 4], None)
    assert list(g.times) == [0, 1, 1.5, 4] and g.step is None


@pytest.mark.parametrize(
    "spec,duration",
    [([0.0], None), ([0, 2, 1], None), ([0, float("nan")], None), ({"step": 0}, 10), ({"step": 1}, -5), ("x", 3)],
)
def test_unusable_grids_raise_grid_error(spec, duration):
    with pytest.raises(GridError):
        Grid.from_spec(spec, duration)


def test_legal_intervals_need_both_ends_on_the_grid_within_a_microsecond():
    g = Grid.from_step(2, 10)
    assert g.is_legal(2.0, 4.0)
    assert g.is_legal(2.0000005, 4.0)
    assert not g.is_legal(2.00001, 4.0)
    assert not g.is_legal(4.0, 4.0)
    assert not g.is_legal(6.0, 4.0)
    assert not g.is_legal(float("nan"), 4.0)
    assert not g.is_legal(True, 4.0)


def test_iou_of_disjoint_touching_and_nested_intervals():
    assert iou((0, 1), (1, 2)) == 0.0
    assert iou((0, 4), (1, 2)) == 0.25
    assert iou((0, 2), (0, 2)) == 1.0
    assert iou((2, 1), (0, 3)) == 0.0


def _brute_best(g: Grid, targets) -> float:
    best = 0.0
    for a in range(g.n_points):
        for b in range(a + 1, g.n_points):
            best = max(best, max(iou((g.times[a], g.times[b]), t) for t in targets))
    return best


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.floats(0.1, 5.0), min_size=1, max_size=14),
    targets=st.lists(st.tuples(st.floats(-3, 40), st.floats(0.05, 20)), min_size=1, max_size=3),
)
def test_closed_form_grid_optimum_equals_brute_force_over_all_grid_pairs(gaps, targets):
    g = Grid(np.concatenate([[0.0], np.cumsum(gaps)]))
    spans = [(s, s + length) for s, length in targets]
    x, a, b = g.best_interval(spans)
    assert x == pytest.approx(_brute_best(g, spans), abs=1e-12)
    if x > 0:
        assert a < b and max(iou((g.times[a], g.times[b]), t) for t in spans) == pytest.approx(x)
