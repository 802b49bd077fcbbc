"""Agreement between two annotators' frozen ledgers (SCORING.md section 4).

The task's scorer runs both ways (A as prediction against B as reference, and the
reverse); the events are paired with the union step's own alignment, and over those
pairs we report per-field Cohen's kappa, the distribution of boundary differences and
the unmatched events.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from . import align, egocentric, moments, tennis
from ._annotations import Any
from .differences import distribution
from .errors import ParameterError
from .matching import maximum_matching
from .registry import get_scorer


def cohen_kappa(a_values: Sequence[Any], b_values: Sequence[Any]) -> float | None:
    """Cohen's kappa of two equally long label sequences.

    ``None`` when there are no pairs; 1.0 when both raters used one and the same label
    throughout (chance agreement 1, observed agreement 1).
    """
    if len(a_values) != len(b_values):
        raise ValueError("kappa needs two sequences of the same length")
    n = len(a_values)
    if not n:
        return None
    observed: float = sum(x == y for x, y in zip(a_values, b_values, strict=True)) / n
    a_counts, b_counts = Counter(a_values), Counter(b_values)
    expected = sum(a_counts[label] * b_counts.get(label, 0) for label in a_counts) / (n * n)
    if expected >= 1:
        return 1.0 if observed >= 1 else 0.0
    return (observed - expected) / (1 - expected)


def _label(event: object, field: str) -> str:
    """A hashable, type-exact label for kappa (``true`` and ``1`` differ)."""
    if not isinstance(event, Mapping) or field not in event:
        return "<missing>"
    value = event[field]
    if field == "nouns" and isinstance(value, list):
        value = sorted(value, key=repr)
    return f"{type(value).__name__}:{json.dumps(value, sort_keys=True, default=repr)}"


def _both_ways(
    scorer_id: str, a: object, b: object, encode: Callable[[Any], bytes], params: Mapping[str, Any]
) -> dict[str, Any]:
    scorer = get_scorer(scorer_id)
    a_vs_b = scorer.score(b, encode(a), **params)
    b_vs_a = scorer.score(a, encode(b), **params)
    return {
        "a_as_prediction": {"reward": a_vs_b.reward, "details": a_vs_b.details},
        "b_as_prediction": {"reward": b_vs_a.reward, "details": b_vs_a.details},
    }


def _unmatched(items: Sequence[Any]) -> dict[str, Any]:
    return {
        "a": [item.a_index for item in items if item.status == "a_only"],
        "b": [item.b_index for item in items if item.status == "b_only"],
    }


def _status_counts(items: Sequence[Any]) -> dict[str, Any]:
    counts = Counter(item.status for item in items)
    return {status: counts[status] for status in ("agreed", "conflicting", "a_only", "b_only")}


def agreement(scorer_id: str, ledger_a: object, ledger_b: object, **params: Any) -> dict[str, Any]:
    """Compare two ledgers shaped like submissions of ``scorer_id``.

    Action ledgers: ``{"actions": [...]}`` (parameters as for the scorer; the
    vocabulary defaults to the labels of both ledgers, so neither side's labels are
    invalid merely because the other never used them). Break-point ledgers:
    ``{"break_points": [...]}``. Moment ledgers: ``{"queries": [{"query_id",
    "video_id", "source", "intervals"}]}`` (the ground-truth shape; the first interval
    of a query is its submission row when that side is the prediction).
    """
    scorer = get_scorer(scorer_id)
    scorer.check_params(params)
    if scorer.agreement_fn is not None:  # a family registered from outside the library
        return scorer.agreement_fn(ledger_a, ledger_b, dict(params))
    if scorer.kind == "actions":
        return _action_agreement(scorer_id, ledger_a, ledger_b, dict(params))
    if scorer.kind == "break_points":
        return _break_point_agreement(scorer_id, scorer.version, ledger_a, ledger_b)
    return _moment_agreement(scorer_id, ledger_a, ledger_b, dict(params))


def _action_agreement(scorer_id: str, a: object, b: object, params: dict[str, Any]) -> dict[str, Any]:
    version = get_scorer(scorer_id).version
    tolerance = params.get("tolerance", egocentric.DEFAULT_TOLERANCE)
    a_list, b_list = align._action_list(a, align.MAX_LEDGER_ACTIONS), align._action_list(b, align.MAX_LEDGER_ACTIONS)
    if params.get("vocabulary") is None:
        usable = align._usable(a_list) + align._usable(b_list)
        params["vocabulary"] = {
            "verbs": sorted({x.verb for x in usable}),
            "nouns": sorted({noun for x in usable for noun in x.nouns}),
        }
    result = _both_ways(
        scorer_id,
        {"actions": a_list},
        {"actions": b_list},
        lambda ledger: egocentric.encode_ledger(ledger["actions"]),
        params,
    )
    items = align.union_actions(a_list, b_list, tolerance=tolerance, version=version)
    paired: list[Any] = [item for item in items if item.a_index is not None and item.b_index is not None]  # both set
    result.update(
        scorer_id=scorer_id,
        pairs=len(paired),
        union=_status_counts(items),
        kappa={
            field: cohen_kappa(
                [_label(a_list[item.a_index], field) for item in paired],
                [_label(b_list[item.b_index], field) for item in paired],
            )
            for field in ("verb", "nouns")
        },
        boundary_differences={
            "unit": "frames (B minus A)",
            "start": distribution([item.start_delta for item in paired]),
            "end": distribution([item.end_delta for item in paired]),
        },
        unmatched=_unmatched(items),
    )
    return result


def _break_point_agreement(scorer_id: str, version: str, a: object, b: object) -> dict[str, Any]:
    a_list, b_list = align._event_list(a), align._event_list(b)
    result = _both_ways(
        scorer_id,
        {"break_points": a_list},
        {"break_points": b_list},
        lambda ledger: json.dumps(ledger).encode("utf-8"),
        {},
    )
    items = align.union_break_points(a_list, b_list, version=version)
    paired: list[Any] = [item for item in items if item.a_index is not None and item.b_index is not None]  # both set
    fields = tennis.SCALAR_FIELDS
    result.update(
        scorer_id=scorer_id,
        pairs=len(paired),
        union=_status_counts(items),
        kappa={
            field: cohen_kappa(
                [_label(a_list[item.a_index], field) for item in paired],
                [_label(b_list[item.b_index], field) for item in paired],
            )
            for field in fields
        },
        shot_count_differences=distribution(
            [
                len(tennis.shot_tokens(b_list[item.b_index])) - len(tennis.shot_tokens(a_list[item.a_index]))
                for item in paired
            ]
        ),
        boundary_differences=None,
        unmatched=_unmatched(items),
    )
    return result


def _first_rows(ledger: object) -> bytes:
    rows = []
    for event in align._moment_list(ledger):
        intervals = align.moment_intervals(event) if isinstance(event, Mapping) else None
        if intervals:
            rows.append({"query_id": event.get("query_id"), "start": intervals[0][0], "end": intervals[0][1]})
    return moments.encode_rows(rows)


def _moment_agreement(scorer_id: str, a: object, b: object, params: dict[str, Any]) -> dict[str, Any]:
    a_list, b_list = align._moment_list(a), align._moment_list(b)
    if params.get("corpus") is None:
        raise ParameterError("moment agreement needs the corpus (video grids)")
    result = _both_ways(scorer_id, {"queries": a_list}, {"queries": b_list}, _first_rows, params)
    items = align.union_moments(a_list, b_list)
    starts: list[float] = []
    ends: list[float] = []
    for item in items:
        if item.a_index is None or item.b_index is None:
            continue
        x = align.moment_intervals(a_list[item.a_index]) or ()
        y = align.moment_intervals(b_list[item.b_index]) or ()
        candidates = [
            [
                k
                for _, k in sorted(
                    (-moments.iou(s, e, c, d), k) for k, (c, d) in enumerate(y) if moments.iou(s, e, c, d) > 0
                )
            ]
            for s, e in x
        ]
        for i, j in maximum_matching(candidates, len(y)):
            starts.append(y[j][0] - x[i][0])
            ends.append(y[j][1] - x[i][1])
    result.update(
        scorer_id=scorer_id,
        pairs=sum(1 for item in items if item.a_index is not None and item.b_index is not None),
        union=_status_counts(items),
        kappa={},
        boundary_differences={
            "unit": "seconds (B minus A), overlapping intervals matched by IoU",
            "start": distribution(starts),
            "end": distribution(ends),
        },
        unmatched=_unmatched(items),
    )
    return result
