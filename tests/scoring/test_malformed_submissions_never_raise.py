"""Malformed and random submissions never raise: they score within [0, 1] with a reason."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import ScoreResult, score_submission
from tests.scoring.paths import EGO_GT, PUBLISHED_FRAME_COUNT, TENNIS_GT, load_json

EGO_TRUTH = load_json(EGO_GT)
TENNIS_TRUTH = load_json(TENNIS_GT)
MOMENT_TRUTH = {
    "queries": [
        {"query_id": "q1", "video_id": "v", "source": "a", "intervals": [[2, 6]]},
        {"query_id": "q2", "video_id": "v", "source": "b", "intervals": [[0, 4], [6, 10]]},
    ]
}
MOMENT_CORPUS = [{"video_id": "v", "duration": 10, "grid": {"step": 2}}]

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=6), children, max_size=5),
    max_leaves=15,
)

verbs = st.sampled_from(["take", "put", "open", "pour", "jump"]) | json_values
nouns = st.lists(st.sampled_from(["cup", "bowl", "skillet", "egg", "zzz"]) | json_values, max_size=4) | json_values
frames = st.integers(min_value=-5, max_value=30000) | json_values
near_actions = st.fixed_dictionaries(
    {},
    optional={"verb": verbs, "nouns": nouns, "start_frame": frames, "end_frame": frames},
)

tokens = st.fixed_dictionaries(
    {}, optional={"stroke": st.sampled_from(["serve", "forehand_groundstroke"]) | json_values, "direction": json_values}
)
near_events = st.fixed_dictionaries(
    {},
    optional={
        "set": st.integers(1, 4) | json_values,
        "medvedev_games": st.integers(0, 6) | json_values,
        "de_minaur_games": st.integers(0, 6) | json_values,
        "medvedev_points": st.sampled_from(["15", "30", "40", "AD"]) | json_values,
        "de_minaur_points": st.sampled_from(["15", "30", "40", "AD"]) | json_values,
        "server": st.sampled_from(["Daniil Medvedev", "Alex De Minaur"]) | json_values,
        "opportunity": st.integers(1, 5) | json_values,
        "outcome": st.sampled_from(["saved", "converted"]) | json_values,
        "first_serve_in": st.booleans() | json_values,
        "rally_shots": st.integers(0, 30) | json_values,
        "shots": st.lists(tokens | json_values, max_size=6) | json_values,
    },
)
moment_rows = st.fixed_dictionaries(
    {},
    optional={
        "query_id": st.sampled_from(["q1", "q2", "q3"]) | json_values,
        "start": st.sampled_from([0, 2, 4, 2.0000001]) | json_values,
        "end": st.sampled_from([4, 6, 10, 11]) | json_values,
    },
)


def _json_bytes(document: object) -> bytes:
    return json.dumps(document).encode()


def assert_sane(result: ScoreResult) -> None:
    assert isinstance(result, ScoreResult)
    assert 0.0 <= result.reward <= 1.0 and not math.isnan(result.reward)
    assert isinstance(result.reason, str) and result.reason
    json.loads(result.reward_json)
    if result.details_json is not None:
        assert json.loads(result.details_json) == result.details


EGOCENTRIC = ["egocentric-f1-v2", "egocentric-f1-v1"]
TENNIS = ["hierarchical-bottleneck-v1", "hierarchical-bottleneck-v2"]


@pytest.mark.parametrize("scorer", EGOCENTRIC)
@SETTINGS
@given(payload=st.binary(max_size=200) | json_values.map(_json_bytes))
def test_random_bytes_and_json_never_raise_in_the_egocentric_scorers(scorer, payload):
    assert_sane(score_submission(scorer, EGO_TRUTH, payload, frame_count=PUBLISHED_FRAME_COUNT))


@pytest.mark.parametrize("scorer", EGOCENTRIC)
@SETTINGS
@given(entries=st.lists(near_actions | json_values, max_size=12))
def test_near_valid_action_ledgers_never_raise(scorer, entries):
    result = score_submission(scorer, EGO_TRUTH, _json_bytes({"actions": entries}), frame_count=PUBLISHED_FRAME_COUNT)
    assert_sane(result)


@pytest.mark.parametrize("scorer", TENNIS)
@SETTINGS
@given(payload=st.binary(max_size=200) | json_values.map(_json_bytes))
def test_random_bytes_and_json_never_raise_in_the_break_point_scorers(scorer, payload):
    assert_sane(score_submission(scorer, TENNIS_TRUTH, payload))


@pytest.mark.parametrize("scorer", TENNIS)
@SETTINGS
@given(events=st.lists(near_events | json_values, max_size=6), extra=st.booleans())
def test_near_valid_break_point_ledgers_never_raise(scorer, events, extra):
    document = {"break_points": events, **({"extra": 1} if extra else {})}
    result = score_submission(scorer, TENNIS_TRUTH, _json_bytes(document))
    assert_sane(result)
    assert result.details["root_schema_issue"] is extra


@SETTINGS
@given(payload=st.binary(max_size=200))
def test_random_bytes_never_raise_in_the_moment_scorer(payload):
    assert_sane(score_submission("moment-utility-v1", MOMENT_TRUTH, payload, corpus=MOMENT_CORPUS))


@SETTINGS
@given(lines=st.lists(moment_rows | json_values, max_size=8))
def test_random_jsonl_rows_never_raise_in_the_moment_scorer(lines):
    payload = "\n".join(json.dumps(line) for line in lines).encode()
    result = score_submission("moment-utility-v1", MOMENT_TRUTH, payload, corpus=MOMENT_CORPUS)
    assert_sane(result)
    details = result.details
    assert details["missing"] + sum(q["status"] == "ok" for q in details["per_query"]) <= details["queries"]


@pytest.mark.parametrize("scorer", EGOCENTRIC + TENNIS + ["moment-utility-v1"])
@pytest.mark.parametrize("payload", [b"[" * 100_000, b'{"a":' * 50_000, b"\x00", b""])
def test_pathological_documents_score_zero(scorer, payload):
    params = {"frame_count": PUBLISHED_FRAME_COUNT} if scorer in EGOCENTRIC else {}
    truth = EGO_TRUTH if scorer in EGOCENTRIC else TENNIS_TRUTH
    if scorer == "moment-utility-v1":
        truth, params = MOMENT_TRUTH, {"corpus": MOMENT_CORPUS}
    result = score_submission(scorer, truth, payload, **params)
    assert_sane(result)
    assert result.reward == 0.0
