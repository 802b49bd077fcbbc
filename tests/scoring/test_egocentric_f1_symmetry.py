"""Egocentric F1 is symmetric when predictions and ground truth swap."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import score_submission

FRAME_COUNT = 400
labels = st.tuples(st.sampled_from(["take", "put", "open"]), st.sampled_from([("cup",), ("bowl",), ("cup", "bowl")]))
actions = st.builds(
    lambda label, start, length: {
        "verb": label[0],
        "nouns": list(label[1]),
        "start_frame": start,
        "end_frame": start + length,
    },
    labels,
    st.integers(0, 300),
    st.integers(1, 60),
)
ledgers = st.lists(actions, min_size=1, max_size=25).map(lambda items: sorted(items, key=lambda a: a["start_frame"]))


def f1(scorer: str, prediction: list, truth: list, tolerance: int) -> float:
    payload = json.dumps({"actions": prediction}).encode()
    result = score_submission(scorer, {"actions": truth}, payload, frame_count=FRAME_COUNT, tolerance=tolerance)
    return result.details["f1"], result.details["true_positives"]


@pytest.mark.parametrize("scorer", ["egocentric-f1-v2", "egocentric-f1-v1"])
@settings(max_examples=80, deadline=None)
@given(a=ledgers, b=ledgers, tolerance=st.integers(0, 15))
def test_f1_and_true_positives_are_symmetric_under_swap(scorer, a, b, tolerance):
    assert f1(scorer, a, b, tolerance) == f1(scorer, b, a, tolerance)
