"""Submissions at every cap are scored (not rejected) and finish in bounded time.

The bounds are generous (seconds, on a shared 2-core machine): they catch quadratic or
exponential work, not micro-regressions; bench/scoring.py measures the real figures.
"""

from __future__ import annotations

import json
import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import score_submission
from tests.scoring.paths import EGO_GT, PUBLISHED_FRAME_COUNT, TENNIS_GT, load_json

EGO_TRUTH = load_json(EGO_GT)
TENNIS_TRUTH = load_json(TENNIS_GT)
BOUND_SECONDS = 5.0
CAP_SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))


def timed(call):
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


@CAP_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from(["v1", "v2"]))
def test_two_thousand_actions_near_the_ground_truth_score_in_bounded_time(seed, version):
    # Large inputs come from a seeded generator: hypothesis draws the seed, not 4000 values.
    rng = random.Random(seed)
    truth = EGO_TRUTH["actions"]
    actions = []
    for _ in range(2000):
        action, shift = rng.choice(truth), rng.randint(-12, 12)
        start = max(0, action["start_frame"] + shift)
        actions.append({**action, "start_frame": start, "end_frame": action["end_frame"] + shift})
    actions.sort(key=lambda a: a["start_frame"])
    payload = json.dumps({"actions": actions}).encode()
    result, seconds = timed(
        lambda: score_submission(f"egocentric-f1-{version}", EGO_TRUTH, payload, frame_count=PUBLISHED_FRAME_COUNT)
    )
    assert result.details["predicted_actions"] == 2000
    assert result.details["valid_predicted_actions"] == 2000
    assert seconds < BOUND_SECONDS


def test_a_file_just_under_two_million_bytes_is_parsed_and_scored():
    actions = [EGO_TRUTH["actions"][0]] * 2000
    payload = json.dumps({"actions": actions}).encode()
    payload += b" " * (2_000_000 - len(payload))
    assert len(payload) == 2_000_000
    result, seconds = timed(
        lambda: score_submission("egocentric-f1-v2", EGO_TRUTH, payload, frame_count=PUBLISHED_FRAME_COUNT)
    )
    assert result.details["true_positives"] == 1
    assert seconds < BOUND_SECONDS


@CAP_SETTINGS
@given(
    reference=st.integers(0, 15),
    tokens=st.lists(
        st.tuples(
            st.sampled_from(["serve", "forehand_groundstroke", "backhand_groundstroke"]),
            st.sampled_from(["wide", "middle", "receiver_backhand"]),
        ),
        min_size=16,
        max_size=16,
    ),
    version=st.sampled_from(["v1", "v2"]),
)
def test_256_events_at_the_shot_caps_score_in_bounded_time(reference, tokens, version):
    base = TENNIS_TRUTH["break_points"][reference]
    shots = [{"stroke": stroke, "direction": direction} for stroke, direction in tokens]
    events = [{**base, "shots": shots} for _ in range(256)]  # 4096 shots, all one identity
    payload = json.dumps({"break_points": events}).encode()
    result, seconds = timed(lambda: score_submission(f"hierarchical-bottleneck-{version}", TENNIS_TRUTH, payload))
    assert result.details["n_predicted"] == 256
    assert result.reason == "ok"
    assert seconds < BOUND_SECONDS


def test_one_event_with_512_shots_and_the_rest_at_the_total_cap_scores_in_bounded_time():
    truth = TENNIS_TRUTH["break_points"]
    longest = max(truth, key=lambda e: len(e["shots"]))
    events = [{**longest, "shots": longest["shots"] * 20 + longest["shots"][:12]}]
    events += [{**truth[k % 16], "shots": truth[k % 16]["shots"] * 2} for k in range(255)]
    events[-1]["shots"] = events[-1]["shots"][:1]
    total = sum(len(e["shots"]) for e in events)
    assert len(events[0]["shots"]) == 512 and total <= 4096
    payload = json.dumps({"break_points": events}).encode()
    result, seconds = timed(lambda: score_submission("hierarchical-bottleneck-v1", TENNIS_TRUTH, payload))
    assert result.reason == "ok"
    assert seconds < BOUND_SECONDS


def test_a_ten_megabyte_moment_submission_scores_in_bounded_time():
    truth = {
        "queries": [
            {"query_id": f"q{k}", "video_id": f"v{k % 10}", "source": "s", "intervals": [[k % 50, k % 50 + 30]]}
            for k in range(500)
        ]
    }
    corpus = [{"video_id": f"v{k}", "duration": 7200, "grid": {"step": 0.5}} for k in range(10)]
    line = b'{"query_id": "q1", "start": 0.5, "end": 31.5}\n'
    payload = line * (10_000_000 // len(line))
    result, seconds = timed(lambda: score_submission("moment-utility-v1", truth, payload, corpus=corpus))
    assert result.reason.startswith("499 missing")
    assert seconds < 3 * BOUND_SECONDS
