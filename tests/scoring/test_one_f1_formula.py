"""Both scorers report F1 through ``scoring.measures.f1``; the formula is the one each of
them wrote before, bit for bit (``egocentric``: ``2.0 * p * r / (p + r)``, ``tennis``:
``2 * p * r / (p + r)``), over the ratios they feed it."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import egocentric, tennis
from scoring.measures import f1


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


counts = st.integers(0, 10**6).flatmap(lambda d: st.tuples(st.integers(0, d), st.just(d)))


@settings(max_examples=2000, deadline=None)
@given(p=counts, r=counts)
def test_f1_is_bitwise_the_formula_of_both_scorers(p, r):
    precision, recall = ratio(*p), ratio(*r)
    egocentric_form = 2.0 * precision * recall / (precision + recall) if precision + recall else 0.0
    tennis_form = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    assert bits(f1(precision, recall)) == bits(egocentric_form) == bits(tennis_form)


def test_f1_edge_values():
    assert f1(0.0, 0.0) == 0.0
    assert f1(1.0, 1.0) == 1.0
    assert f1(0.5, 0.0) == 0.0
    assert f1(2 / 3, 1 / 3) == 2 * (2 / 3) * (1 / 3) / 1.0


def test_both_scorers_use_the_shared_function():
    assert egocentric.f1 is f1 and tennis.f1 is f1
    assert not hasattr(tennis, "_f1")
