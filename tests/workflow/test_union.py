"""The union step aligns with the scorer's own matching, for every task family."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from annotator.actions.union import align_union
from annotator.base.builtin_kinds import ACTION_LEDGER, BREAK_POINT_LEDGER, MOMENT_QUERIES

TENNIS_KEY = Path(
    "data/agentic-vbench/medvedev-de-minaur-2023-us-open-break-point-ledger/calibration/baselines/anchors/oracle/solution.json"
)


def statuses(items):
    return sorted(item["status"] for item in items)


def test_identical_action_ledgers_are_all_agreed():
    events = [{"verb": "take", "nouns": ["cup"], "start_frame": s, "end_frame": s + 10} for s in (0, 50, 100)]
    items = align_union(ACTION_LEDGER, "egocentric-f1-v2", events, copy.deepcopy(events))
    assert statuses(items) == ["agreed"] * 3


def test_a_boundary_beyond_tolerance_is_one_conflict_not_two_orphans():
    a = [{"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 200}]
    b = [{"verb": "take", "nouns": ["cup"], "start_frame": 130, "end_frame": 200}]
    [item] = align_union(ACTION_LEDGER, "egocentric-f1-v2", a, b)
    assert item["status"] == "conflicting"
    assert item["boundary_deltas"] == {"start_frame": 30, "end_frame": 0}
    assert "start_frame" in item["differing_fields"]


def test_break_points_pair_only_on_equal_identity():
    key = json.loads(TENNIS_KEY.read_bytes())["break_points"]
    b = copy.deepcopy(key)
    b[0]["terminal_stroke"] = "unknown"  # same point, one summary field differs
    b[1]["set"] = 5  # one identity value off: a near miss, shown as a conflict on `set`
    del b[2]  # B missed this point
    items = align_union(BREAK_POINT_LEDGER, "hierarchical-bottleneck-v1", key, b)
    by_a = {item["a_index"]: item for item in items if item["a_index"] is not None}
    assert by_a[0]["status"] == "conflicting" and by_a[0]["differing_fields"] == ["terminal_stroke"]
    assert by_a[1]["status"] == "conflicting" and by_a[1]["differing_fields"] == ["set"]
    assert by_a[2]["status"] == "a_only"
    assert statuses(items).count("agreed") == len(key) - 3
    assert "b_only" not in statuses(items)


def test_moment_queries_pair_by_query_id():
    a = [
        {"query_id": "q1", "query": "a dog runs", "intervals": [[2.0, 6.0]]},
        {"query_id": "q2", "query": "x", "intervals": [[0.0, 2.0]]},
    ]
    b = [
        {"query_id": "q1", "query": "a dog runs", "intervals": [[2.0, 8.0]]},
        {"query_id": "q3", "query": "y", "intervals": [[4.0, 6.0]]},
    ]
    items = align_union(MOMENT_QUERIES, "moment-utility-v1", a, b)
    assert statuses(items) == ["a_only", "b_only", "conflicting"]
    conflicting = next(i for i in items if i["status"] == "conflicting")
    assert conflicting["differing_fields"] == ["intervals"]
