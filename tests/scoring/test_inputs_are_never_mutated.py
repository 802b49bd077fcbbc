"""No public function mutates its inputs (checked against deep copies)."""

from __future__ import annotations

import copy
import json

import pytest

import scoring
from tests.scoring.paths import EGO, EGO_GT, PUBLISHED_FRAME_COUNT, TENNIS, TENNIS_GT, load_json

EGO_TRUTH = load_json(EGO_GT)
TENNIS_TRUTH = load_json(TENNIS_GT)
CLAUDE = load_json(EGO / "calibration" / "rollouts" / "claude-opus-4.8.solution.json")
FULL_MEDIA = load_json(
    TENNIS / "calibration" / "rollouts" / "codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json"
)
VOCABULARY = load_json(EGO / "environment" / "vocabulary.json")
MOMENT_TRUTH = {
    "queries": [
        {"query_id": "q1", "video_id": "v", "source": "a", "intervals": [[2, 6]]},
        {"query_id": "q2", "video_id": "v", "source": "b", "intervals": [[0, 4], [6, 10]]},
    ]
}
MOMENT_OTHER = {
    "queries": [
        {"query_id": "q1", "video_id": "v", "source": "a", "intervals": [[2, 8]]},
        {"query_id": "q3", "video_id": "v", "source": "b", "intervals": [[0, 4]]},
    ]
}
CORPUS = [{"video_id": "v", "duration": 10, "grid": {"step": 2}}]

CALLS = [
    (
        "score egocentric",
        lambda a, b, p: scoring.score_submission("egocentric-f1-v2", a, json.dumps(b).encode(), **p),
        EGO_TRUTH,
        CLAUDE,
        {"frame_count": PUBLISHED_FRAME_COUNT, "vocabulary": VOCABULARY},
    ),
    (
        "anchors egocentric",
        lambda a, b, p: scoring.anchors("egocentric-f1-v1", a, **p),
        EGO_TRUTH,
        None,
        {"frame_count": PUBLISHED_FRAME_COUNT},
    ),
    (
        "agreement egocentric",
        lambda a, b, p: scoring.agreement("egocentric-f1-v2", a, b, **p),
        CLAUDE,
        EGO_TRUTH,
        {"frame_count": PUBLISHED_FRAME_COUNT},
    ),
    ("union actions", lambda a, b, p: scoring.union_actions(a, b, **p), CLAUDE, EGO_TRUTH, {"tolerance": 12}),
    (
        "align actions",
        lambda a, b, p: scoring.align_actions(a, b, **p),
        CLAUDE,
        EGO_TRUTH,
        {"tolerance": 12, "version": "v1"},
    ),
    (
        "score tennis",
        lambda a, b, p: scoring.score_submission("hierarchical-bottleneck-v2", a, json.dumps(b).encode()),
        TENNIS_TRUTH,
        FULL_MEDIA,
        {},
    ),
    ("anchors tennis", lambda a, b, p: scoring.anchors("hierarchical-bottleneck-v1", a), TENNIS_TRUTH, None, {}),
    (
        "agreement tennis",
        lambda a, b, p: scoring.agreement("hierarchical-bottleneck-v1", a, b),
        FULL_MEDIA,
        TENNIS_TRUTH,
        {},
    ),
    ("union break points", lambda a, b, p: scoring.union_break_points(a, b), FULL_MEDIA, TENNIS_TRUTH, {}),
    (
        "align break points",
        lambda a, b, p: scoring.align_break_points(a, b, version="v2"),
        FULL_MEDIA,
        TENNIS_TRUTH,
        {},
    ),
    (
        "score moments",
        lambda a, b, p: scoring.score_submission("moment-utility-v1", a, b"", **p),
        MOMENT_TRUTH,
        None,
        {"corpus": CORPUS},
    ),
    (
        "anchors moments",
        lambda a, b, p: scoring.anchors("moment-utility-v1", a, **p),
        MOMENT_TRUTH,
        None,
        {"corpus": CORPUS},
    ),
    (
        "agreement moments",
        lambda a, b, p: scoring.agreement("moment-utility-v1", a, b, **p),
        MOMENT_TRUTH,
        MOMENT_OTHER,
        {"corpus": CORPUS},
    ),
    ("union moments", lambda a, b, p: scoring.union_moments(a, b), MOMENT_TRUTH, MOMENT_OTHER, {}),
]


@pytest.mark.parametrize(("name", "call", "first", "second", "params"), CALLS, ids=[c[0] for c in CALLS])
def test_public_functions_leave_their_inputs_untouched(name, call, first, second, params):
    before = copy.deepcopy((first, second, params))
    call(first, second, params)
    assert (first, second, params) == before
