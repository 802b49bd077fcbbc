"""Alignment returns the pairs the scorers count; the union tiers near misses."""

from __future__ import annotations

import copy
import glob
import json
from pathlib import Path

import pytest

from scoring import (
    CapExceeded,
    align_actions,
    align_break_points,
    score_submission,
    union_actions,
    union_break_points,
    union_moments,
)
from scoring.align import MAX_LEDGER_ACTIONS
from tests.scoring.paths import EGO, EGO_GT, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, load_json


def act(verb="take", nouns=("cup",), start=10, end=30) -> dict:
    return {"verb": verb, "nouns": list(nouns), "start_frame": start, "end_frame": end}


def statuses(items) -> list[tuple]:
    return [(i.status, i.a_index, i.b_index, i.tier, i.differing_fields) for i in items]


EGO_SOLUTIONS = [
    ("v2", path) for path in sorted(glob.glob(str(EGO / "calibration" / "rollouts" / "*.solution.json")))
] + [("v1", str(EGO / "_older_versions" / "157e7b4" / "calibration" / "rollouts" / "codex-gpt-5.6-sol.solution.json"))]


@pytest.mark.parametrize(("version", "path"), EGO_SOLUTIONS, ids=lambda x: Path(x).name if "/" in str(x) else x)
def test_align_actions_returns_as_many_pairs_as_the_scorer_counts(version: str, path: str):
    truth = load_json(EGO_GT)
    payload = Path(path).read_bytes()
    result = score_submission(f"egocentric-f1-{version}", truth, payload, frame_count=PUBLISHED_FRAME_COUNT)
    submission = json.loads(payload)
    if not isinstance(submission, dict):
        assert result.details["true_positives"] == 0
        return
    pairs = align_actions(submission, truth, tolerance=12, version=version)
    assert len(pairs) == result.details["true_positives"]
    for pair in pairs:
        predicted, reference = submission["actions"][pair.pred_index], truth["actions"][pair.ref_index]
        assert predicted["verb"] == reference["verb"]
        assert set(predicted["nouns"]) == set(reference["nouns"])
        assert pair.start_delta == predicted["start_frame"] - reference["start_frame"]
        assert abs(pair.start_delta) <= 12 and abs(pair.end_delta) <= 12


def test_identical_action_ledgers_are_all_agreed():
    ledger = [act(start=10, end=30), act("put", ("bowl", "cup"), 40, 60)]
    same = [act(start=10, end=30), act("put", ("cup", "bowl"), 40, 60)]
    assert statuses(union_actions(ledger, same, tolerance=12)) == [
        ("agreed", 0, 0, "full", ()),
        ("agreed", 1, 1, "full", ()),
    ]


def test_near_misses_become_conflicting_items_in_tier_order():
    a = [act(start=10, end=30), act("put", ("cup",), 100, 120), act("open", ("fridge",), 200, 220)]
    a.append(act("close", ("fridge",), 300, 320))
    b = [act(start=14, end=30), act("put", ("bowl",), 101, 121), act("close", ("fridge",), 205, 219)]
    b.append(act("close", ("fridge",), 310, 360))
    items = union_actions(a, b, tolerance=12)
    assert statuses(items) == [
        ("conflicting", 0, 0, "full", ("start_frame",)),
        ("conflicting", 1, 1, "verb_and_boundary", ("nouns", "start_frame", "end_frame")),
        ("conflicting", 2, 2, "boundary_only", ("verb", "start_frame", "end_frame")),
        ("conflicting", 3, 3, "overlap", ("start_frame", "end_frame")),
    ]
    assert (items[0].start_delta, items[0].end_delta) == (4, 0)
    assert (items[3].start_delta, items[3].end_delta) == (10, 40)


def test_unpaired_and_malformed_events_are_one_sided():
    a = [act(start=10, end=30), {"verb": "take"}]
    b = [act(start=500, end=530)]
    assert statuses(union_actions(a, b, tolerance=12)) == [
        ("a_only", 0, None, None, ()),
        ("b_only", None, 0, None, ()),
        ("a_only", 1, None, None, ()),
    ]


def test_action_ledgers_over_the_cap_are_refused():
    # The union compares ledgers: their cap (what a ledger holds), not the scorer's 2,000
    # predicted actions.
    assert len(union_actions([act()] * 2001, [], tolerance=12)) == 2001
    with pytest.raises(CapExceeded):
        union_actions([act()] * (MAX_LEDGER_ACTIONS + 1), [], tolerance=12)


def test_align_break_points_is_the_scorers_alignment():
    truth = load_json(TENNIS_GT)
    path = TENNIS / "calibration" / "rollouts" / "codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json"
    details = score_submission("hierarchical-bottleneck-v1", truth, path.read_bytes()).details
    pairs = align_break_points(load_json(path), truth)
    assert [(p.pred_index, p.ref_index) for p in pairs] == [
        (m["prediction_index"], m["reference_index"]) for m in details["matched_pairs"]
    ]
    assert [p.to_dict()["event_credit"] for p in pairs] == [m["event_credit"] for m in details["matched_pairs"]]
    assert [p.shot_atoms for p in pairs] == [m["correct_shot_fields"] for m in details["matched_pairs"]]
    for pair in pairs:
        assert sum(step[2] for step in pair.shot_alignment) == pair.shot_atoms


def test_break_point_union_names_differing_fields_and_shots():
    truth = load_json(TENNIS_GT)["break_points"]
    b = copy.deepcopy(truth[:3])
    b[0]["terminal_error"] = "net"
    b[1]["shots"][1]["direction"] = "unknown"
    b[2]["medvedev_points"] = "40"
    items = union_break_points(truth[:3], b)
    assert statuses(items) == [
        ("conflicting", 0, 0, "identity", ("terminal_error",)),
        ("conflicting", 1, 1, "identity", ("shots",)),
        ("conflicting", 2, 2, "near_identity", ("medvedev_points",)),
    ]
    assert all(item.status == "agreed" for item in union_break_points(truth, copy.deepcopy(truth)))


def test_moment_union_pairs_by_query_id():
    a = [
        {"query_id": "q1", "query": "a dog", "intervals": [[0, 4], [6, 8]]},
        {"query_id": "q2", "query": "a cat", "intervals": [[2, 4]]},
        {"query_id": "q3", "query": "a cow", "intervals": [[2, 4]]},
    ]
    b = [
        {"query_id": "q2", "query": "a cat", "intervals": [[2, 6]]},
        {"query_id": "q1", "query": "a dog", "intervals": [[6, 8], [0, 4]]},
        {"query_id": "q9", "query": "a hen", "intervals": []},
    ]
    items = union_moments({"queries": a}, b)
    assert statuses(items) == [
        ("agreed", 0, 1, "query_id", ()),
        ("conflicting", 1, 0, "query_id", ("intervals",)),
        ("a_only", 2, None, None, ()),
        ("b_only", None, 2, None, ()),
    ]
    assert (items[1].start_delta, items[1].end_delta) == (0, 2)
