"""Calibration anchors: what trivial submissions score against one ground truth.

Every anchor is a submission built from the ground truth (and the task parameters)
alone, scored by the real scorer. Random anchors use ``random.Random(seed)`` for
seeds 0..19 and report the mean. The definitions are documented in docs/scoring.md.
"""

from __future__ import annotations

import json
import random
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from . import egocentric, moments, tennis
from . import tennis_vocabulary as vocabulary
from ._annotations import Any
from ._result_dataclasses import Anchor
from .registry import get_scorer

RANDOM_SEEDS = tuple(range(20))


def anchors(scorer_id: str, ground_truth: object, **params: Any) -> list[Anchor]:
    """The calibration table of one scorer on one ground truth."""
    scorer = get_scorer(scorer_id)
    scorer.check_params(params)

    def run(solution: bytes) -> float:
        return scorer.score(ground_truth, solution, **params).reward

    if scorer.anchors_fn is not None:  # a family registered from outside the library
        return scorer.anchors_fn(run, ground_truth, params)
    if scorer.kind == "actions":
        return _action_anchors(run, ground_truth, params)
    if scorer.kind == "break_points":
        return _break_point_anchors(run, ground_truth)
    return _moment_anchors(run, ground_truth, params)


def _mean_reward(rewards: Sequence[float]) -> float:
    return round(sum(rewards) / len(rewards), 6)


# ------------------------------------------------------------------------- actions


def modal_label(actions: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]]:
    """The most common (verb, noun set); ties go to the first in ground-truth order."""
    counts = Counter((a["verb"], tuple(sorted(a["nouns"]))) for a in actions)
    verb, nouns = counts.most_common(1)[0][0]
    return verb, list(nouns)


def median_duration(actions: Sequence[Mapping[str, Any]]) -> int:
    return int(statistics.median(a["end_frame"] - a["start_frame"] for a in actions))


def action_fixed_prior(actions: Sequence[Mapping[str, Any]], frame_count: int) -> list[dict[str, Any]]:
    """|GT| copies of the modal label with the median duration, evenly spaced over the
    whole video (start k = floor(k * (N - 1 - d) / (n - 1)))."""
    if not actions:
        return []
    verb, nouns = modal_label(actions)
    duration = max(1, median_duration(actions))
    span = max(0, frame_count - 1 - duration)
    count = len(actions)
    starts = [(k * span) // max(1, count - 1) for k in range(count)]
    return [{"verb": verb, "nouns": list(nouns), "start_frame": s, "end_frame": s + duration} for s in starts]


def action_random_guess(
    actions: Sequence[Mapping[str, Any]], task: egocentric.EgocentricTask, seed: int
) -> list[dict[str, Any]]:
    """|GT| actions with a uniform random verb and one uniform random noun from the
    vocabulary, the median duration, uniform random starts; sorted by start."""
    rng = random.Random(seed)
    verbs, nouns = sorted(task.verbs), sorted(task.nouns)
    duration = max(1, median_duration(actions)) if actions else 1
    guesses = []
    for _ in range(len(actions)):
        start = rng.randrange(0, max(1, task.frame_count - duration))
        guesses.append(
            {
                "verb": rng.choice(verbs),
                "nouns": [rng.choice(nouns)],
                "start_frame": start,
                "end_frame": start + duration,
            }
        )
    guesses.sort(key=lambda action: action["start_frame"])
    return guesses


def _shifted(actions: Sequence[Mapping[str, Any]], frames: int) -> list[dict[str, Any]]:
    return [{**a, "start_frame": a["start_frame"] + frames, "end_frame": a["end_frame"] + frames} for a in actions]


def _action_anchors(run: Callable[..., Any], ground_truth: object, params: Mapping[str, Any]) -> list[Anchor]:
    task = egocentric.build_task(
        ground_truth,
        frame_count=params.get("frame_count"),
        tolerance=params.get("tolerance", egocentric.DEFAULT_TOLERANCE),
        vocabulary=params.get("vocabulary"),
    )
    actions = [dict(a) for a in egocentric.ground_truth_actions(ground_truth)]
    tolerance = task.tolerance

    def ledger(items: Sequence[Mapping[str, Any]]) -> bytes:
        return egocentric.encode_ledger(items)

    random_rewards = [run(ledger(action_random_guess(actions, task, seed))) for seed in RANDOM_SEEDS]
    return [
        Anchor("oracle", run(ledger(actions)), "the ground truth itself"),
        Anchor("empty", run(ledger([])), "no actions"),
        Anchor(
            f"shift_plus_{tolerance}",
            run(ledger(_shifted(actions, tolerance))),
            f"oracle with every boundary moved +{tolerance} frames (the tolerance)",
        ),
        Anchor(
            f"shift_plus_{tolerance + 1}",
            run(ledger(_shifted(actions, tolerance + 1))),
            f"oracle with every boundary moved +{tolerance + 1} frames (tolerance + 1)",
        ),
        Anchor("reversed", run(ledger(actions[::-1])), "oracle in reverse order"),
        Anchor(
            "duplicated",
            run(ledger([a for a in actions for _ in (0, 1)])),
            "every oracle action submitted twice in a row",
        ),
        Anchor(
            "random_vocabulary",
            _mean_reward(random_rewards),
            "mean of 20 seeds: |GT| actions, random verb and noun, median duration, random start",
        ),
        Anchor(
            "fixed_prior",
            run(ledger(action_fixed_prior(actions, task.frame_count))),
            "best no-media fixed prior: |GT| copies of the modal (verb, noun set), median "
            "duration, evenly spaced over the video",
        ),
    ]


# -------------------------------------------------------------------- break points

GRANTED_FIELDS = tennis.IDENTITY_FIELDS + ("outcome",)
EDITOR_VALUES: dict[str, tuple[Any, ...]] = {
    "first_serve_in": (True, False),
    "serve_direction": vocabulary.SERVE_DIRECTIONS,
    "terminal_stroke": vocabulary.STROKES,
    "terminal_court_position": vocabulary.COURT_POSITIONS,
    "terminal_result": vocabulary.RESULTS,
    "terminal_error": vocabulary.ERRORS,
}
RALLY_DIRECTIONS = vocabulary.RALLY_DIRECTIONS


def _mode(values: Sequence[Any]) -> Any:
    """Most common value; ties go to the first in reference order."""
    return Counter(values).most_common(1)[0][0]


def break_point_fixed_prior(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The published ``score_result_plus_global_modal_priors_v1`` baseline: identity
    and outcome copied from the reference, every other summary field its reference
    mode, shots one token: the reference's modal first token."""
    if not events:
        return []
    modes = {field: _mode([e.get(field) for e in events]) for field in tennis.SUMMARY_FIELDS if field != "outcome"}
    first_tokens = [tennis.shot_tokens(e)[0] for e in events if tennis.shot_tokens(e)]
    stroke, direction = _mode(first_tokens) if first_tokens else (vocabulary.SERVE, "unknown")
    prior = []
    for event in events:
        copied = {field: event.get(field) for field in GRANTED_FIELDS}
        prior.append({**copied, **modes, "shots": [{"stroke": stroke, "direction": direction}]})
    return prior


def break_point_random_guess(events: Sequence[Any], seed: int) -> list[dict[str, Any]]:
    """Identity and outcome copied (as in the fixed prior); every other field drawn
    uniformly from the editor's closed lists, players from the reference, rally length
    uniform in 1..the longest reference rally, that many random shot tokens."""
    rng = random.Random(seed)
    players = sorted({e.get("server") for e in events if isinstance(e.get("server"), str)})
    players = players or ["unknown"]
    longest = max((e.get("rally_shots") for e in events if type(e.get("rally_shots")) is int), default=1)
    guesses = []
    for event in events:
        guess = {field: event.get(field) for field in GRANTED_FIELDS}
        for field, values in EDITOR_VALUES.items():
            guess[field] = rng.choice(values)
        guess["terminal_player"] = rng.choice(players)
        rally = rng.randint(1, max(1, longest))
        guess["rally_shots"] = rally
        shots = [{"stroke": vocabulary.SERVE, "direction": rng.choice(EDITOR_VALUES["serve_direction"])}]
        strokes = EDITOR_VALUES["terminal_stroke"][1:]
        for _ in range(rally - 1):
            shots.append({"stroke": rng.choice(strokes), "direction": rng.choice(RALLY_DIRECTIONS)})
        guess["shots"] = shots
        guesses.append(guess)
    return guesses


def _break_point_anchors(run: Callable[..., Any], ground_truth: object) -> list[Anchor]:
    events = tennis.ground_truth_events(ground_truth)

    def ledger(items: Sequence[Any]) -> bytes:
        return json.dumps({"break_points": list(items)}).encode("utf-8")

    dict_events = [e for e in events if isinstance(e, Mapping)]
    random_rewards = [run(ledger(break_point_random_guess(dict_events, seed))) for seed in RANDOM_SEEDS]
    return [
        Anchor("oracle", run(ledger(events)), "the ground truth itself"),
        Anchor("empty", run(ledger([])), "no events"),
        Anchor("reversed", run(ledger(events[::-1])), "oracle in reverse order"),
        Anchor(
            "duplicated",
            run(ledger([e for e in events for _ in (0, 1)])),
            "every oracle event submitted twice in a row",
        ),
        Anchor(
            "random_vocabulary",
            _mean_reward(random_rewards),
            "mean of 20 seeds: identity and outcome from the reference, every other field "
            "random from the editor's closed lists",
        ),
        Anchor(
            "fixed_prior",
            run(ledger(break_point_fixed_prior(dict_events))),
            "best no-media fixed prior (published score_result_plus_global_modal_priors_v1): "
            "identity and outcome from the reference, modal value of every other field",
        ),
    ]


# ------------------------------------------------------------------------- moments


def _moment_anchors(run: Callable[..., Any], ground_truth: object, params: Mapping[str, Any]) -> list[Anchor]:
    queries = moments.ground_truth_queries(ground_truth)
    corpus = params.get("corpus")
    if corpus is None and isinstance(ground_truth, Mapping):
        corpus = ground_truth.get("videos")
    grids = moments.corpus_grids(corpus) if corpus is not None else {}

    def rows(choose: Callable[..., Any]) -> bytes:
        chosen = []
        for query in queries:
            grid = grids.get(query.video_id) or []
            interval = choose(query, grid) if len(grid) >= 2 else None
            if interval is not None:
                chosen.append({"query_id": query.query_id, "start": interval[0], "end": interval[1]})
        return moments.encode_rows(chosen)

    def oracle(query: moments.Query, grid: Sequence[float]) -> tuple[float, float] | None:
        return moments.best_grid_interval(grid, query.intervals)[1]

    def random_interval(rng: random.Random) -> Callable[[moments.Query, Sequence[float]], tuple[float, float]]:
        def choose(query: moments.Query, grid: Sequence[float]) -> tuple[float, float]:
            i, j = sorted(rng.sample(range(len(grid)), 2))
            return grid[i], grid[j]

        return choose

    random_rewards = [run(rows(random_interval(random.Random(seed)))) for seed in RANDOM_SEEDS]
    return [
        Anchor("oracle", run(rows(oracle)), "the grid-optimal interval of every query"),
        Anchor("empty", run(b""), "no rows"),
        Anchor(
            "whole_video",
            run(rows(lambda query, grid: (grid[0], grid[-1]))),
            "the whole video (first to last grid point) for every query",
        ),
        Anchor(
            "random_grid_interval",
            _mean_reward(random_rewards),
            "mean of 20 seeds: a uniformly random pair of distinct grid points per query",
        ),
    ]
