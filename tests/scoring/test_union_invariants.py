"""Union items cover every event of both ledgers exactly once, whatever the events are."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import union_actions, union_break_points, union_moments

junk = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3) | st.lists(st.integers(), max_size=2)
actions = st.fixed_dictionaries(
    {},
    optional={
        "verb": st.sampled_from(["take", "put"]) | junk,
        "nouns": st.lists(st.sampled_from(["cup", "bowl"]), max_size=2) | junk,
        "start_frame": st.integers(0, 60) | junk,
        "end_frame": st.integers(0, 80) | junk,
    },
)
break_points = st.fixed_dictionaries(
    {},
    optional={
        "set": st.integers(1, 2) | junk,
        "medvedev_games": st.integers(0, 1),
        "de_minaur_games": st.integers(0, 1),
        "medvedev_points": st.sampled_from(["30", "40"]),
        "de_minaur_points": st.sampled_from(["30", "40"]),
        "server": st.sampled_from(["A", "B"]),
        "opportunity": st.integers(1, 2),
        "outcome": st.sampled_from(["saved", "converted"]) | junk,
        "shots": st.lists(st.fixed_dictionaries({"stroke": st.sampled_from(["serve", "lob"])}), max_size=3) | junk,
    },
)
moments = st.fixed_dictionaries(
    {},
    optional={
        "query_id": st.sampled_from(["q1", "q2", "q3"]) | junk,
        "query": st.sampled_from(["a", "b"]),
        "intervals": st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)).map(list), max_size=2) | junk,
    },
)


def assert_covers(items, a: list, b: list) -> None:
    a_seen = Counter(item.a_index for item in items if item.a_index is not None)
    b_seen = Counter(item.b_index for item in items if item.b_index is not None)
    assert a_seen == Counter(range(len(a)))
    assert b_seen == Counter(range(len(b)))
    for item in items:
        paired = item.a_index is not None and item.b_index is not None
        assert item.status in (("agreed", "conflicting") if paired else ("a_only", "b_only"))
        assert (item.status == "conflicting") == bool(item.differing_fields)


@settings(max_examples=80, deadline=None)
@given(
    a=st.lists(actions | junk, max_size=10),
    b=st.lists(actions | junk, max_size=10),
    version=st.sampled_from(["v1", "v2"]),
)
def test_action_union_covers_both_ledgers_once(a, b, version):
    assert_covers(union_actions(a, b, tolerance=5, version=version), a, b)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(break_points | junk, max_size=8), b=st.lists(break_points | junk, max_size=8))
def test_break_point_union_covers_both_ledgers_once(a, b):
    assert_covers(union_break_points(a, b), a, b)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(moments | junk, max_size=6), b=st.lists(moments | junk, max_size=6))
def test_moment_union_covers_both_ledgers_once(a, b):
    assert_covers(union_moments(a, b), a, b)
