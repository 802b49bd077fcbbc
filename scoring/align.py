"""Alignment and union of two ledgers with the scorers' own matching rules.

The union step of the workflow and the per-event diagnostics call these functions, so
an adjudicator sees exactly the pairs the scorer counts. Every function is pure and
returns plain dataclasses; indices always point into the lists that were passed in.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from . import egocentric, moments, tennis
from ._annotations import TYPE_CHECKING, Any
from ._result_dataclasses import UnionItem
from .errors import CapExceeded, ParameterError
from .matching import maximum_matching

if TYPE_CHECKING:
    from typing import TypeGuard

# ----------------------------------------------------------------------- actions


@dataclass(frozen=True)
class Pair:
    """Two paired actions; deltas are prediction minus reference, in frames."""

    pred_index: int
    ref_index: int
    start_delta: int
    end_delta: int
    tier: str = "full"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pred_index": self.pred_index,
            "ref_index": self.ref_index,
            "start_delta": self.start_delta,
            "end_delta": self.end_delta,
            "tier": self.tier,
        }


ACTION_FIELDS = ("verb", "nouns", "start_frame", "end_frame")

# The most events per side a union or an agreement compares, per family: what one ledger
# of the family may hold (the application refuses an event past it, and the same figure
# at every door). Actions and moments align in near-linear time; the break-point
# alignment is quadratic and keeps the scorer's own caps (events and shots).
MAX_LEDGER_ACTIONS = 5000
LEDGER_EVENT_CAPS = {"actions": MAX_LEDGER_ACTIONS, "moments": 5000, "break_points": tennis.MAX_PREDICTED_EVENTS}
ACTION_TIERS = ("full", "verb_and_boundary", "boundary_only", "overlap")


def _action_list(events: object, cap: int = egocentric.MAX_PREDICTED_ACTIONS) -> list[Any]:
    """The actions of a ledger or submission; ``cap``: the scorer's for a prediction,
    ``MAX_LEDGER_ACTIONS`` where two ledgers are compared."""
    if isinstance(events, Mapping):
        events = events.get("actions")
    if not isinstance(events, list):
        raise ParameterError("an action ledger is a list of actions or {'actions': [...]}")
    if len(events) > cap:
        raise CapExceeded(f"more than {cap} actions")
    return events


def _is_frame(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def structural_action(index: int, event: object) -> egocentric.Action | None:
    """The action an event describes, or None when it is structurally unusable.

    Vocabulary, frame-count and order rules are the scorer's validity checks and are
    not applied here; use :func:`scoring.score_submission` for those.
    """
    if not isinstance(event, Mapping) or not egocentric.REQUIRED_KEYS.issubset(event):
        return None
    verb, nouns = event["verb"], event["nouns"]
    start, end = event["start_frame"], event["end_frame"]
    if not isinstance(verb, str) or not isinstance(nouns, list) or not nouns:
        return None
    if not all(isinstance(noun, str) for noun in nouns) or len(set(nouns)) != len(nouns):
        return None
    if not (_is_frame(start) and _is_frame(end)) or not start < end:
        return None
    return egocentric.Action(index, verb, frozenset(nouns), start, end)


def _usable(events: list[Any]) -> list[egocentric.Action]:
    actions = (structural_action(index, event) for index, event in enumerate(events))
    return [action for action in actions if action is not None]


def _check_version(version: str, versions: Sequence[str]) -> None:
    if version not in versions:
        raise ParameterError(f"version must be one of {', '.join(versions)}")


def _check_tolerance(tolerance: object) -> int:
    if not _is_frame(tolerance) or tolerance < 0:
        raise ParameterError(f"tolerance must be an integer >= 0, got {tolerance!r}")
    return tolerance


def _tier_pairs(
    left: Sequence[egocentric.Action],
    right: Sequence[egocentric.Action],
    tier: str,
    tolerance: int,
    version: str,
) -> list[tuple[int, int]]:
    if tier != "overlap":
        return egocentric.match_actions(
            left,
            right,
            tolerance=tolerance,
            version=version,
            predicate=egocentric.PREDICATES[tier],
        )
    order = sorted(range(len(right)), key=lambda k: right[k].start)
    starts = [right[k].start for k in order]
    longest = max((other.end - other.start for other in right), default=0)
    candidates = []
    for action in left:
        found = []
        low = bisect_right(starts, action.start - longest)
        for position in range(low, bisect_left(starts, action.end)):
            k = order[position]
            other = right[k]
            overlap = min(action.end, other.end) - max(action.start, other.start)
            if overlap > 0:
                union = max(action.end, other.end) - min(action.start, other.start)
                found.append((-Fraction(overlap, union), k))
        found.sort()
        candidates.append([k for _, k in found])
    return maximum_matching(candidates, len(right))


def align_actions(pred: object, ref: object, *, tolerance: int, version: str = "v2") -> list[Pair]:
    """The pairs the egocentric scorer counts as true positives.

    ``v2``: a maximum one-to-one matching (each prediction prefers the closest
    boundaries); ``v1``: the longest order-preserving matching of ``pred`` in its
    order against ``ref`` in chronological order. Structurally unusable entries are
    skipped; indices point into the given lists.
    """
    _check_version(version, egocentric.VERSIONS)
    tolerance = _check_tolerance(tolerance)
    predictions = _usable(_action_list(pred))
    references = _usable(_action_list(ref))
    if version == "v1":
        references = egocentric.chronological(references)
    pairs = egocentric.match_actions(predictions, references, tolerance=tolerance, version=version)
    return [_action_pair(predictions[i], references[j], "full") for i, j in pairs]


def _action_pair(p: egocentric.Action, r: egocentric.Action, tier: str) -> Pair:
    return Pair(p.index, r.index, p.start - r.start, p.end - r.end, tier)


def _action_item(a: egocentric.Action, b: egocentric.Action, tier: str) -> UnionItem:
    differing = tuple(
        name
        for name, same in (
            ("verb", a.verb == b.verb),
            ("nouns", a.nouns == b.nouns),
            ("start_frame", a.start == b.start),
            ("end_frame", a.end == b.end),
        )
        if not same
    )
    return UnionItem(
        status="conflicting" if differing else "agreed",
        a_index=a.index,
        b_index=b.index,
        tier=tier,
        differing_fields=differing,
        start_delta=b.start - a.start,
        end_delta=b.end - a.end,
    )


def union_actions(a_events: object, b_events: object, *, tolerance: int, version: str = "v2") -> list[UnionItem]:
    """Union of two action ledgers.

    Tier ``full`` is the scorer's own matching (verb, noun set, both boundaries within
    ``tolerance``); the leftovers are then paired by ``verb_and_boundary``, then
    ``boundary_only`` (same matching rule), then ``overlap`` (any temporal overlap,
    largest IoU first), so near misses become ``conflicting`` items. Items are in time
    order; unusable entries come last as one-sided items.
    """
    _check_version(version, egocentric.VERSIONS)
    tolerance = _check_tolerance(tolerance)
    a_list, b_list = _action_list(a_events, MAX_LEDGER_ACTIONS), _action_list(b_events, MAX_LEDGER_ACTIONS)
    a_left, b_left = _usable(a_list), _usable(b_list)
    if version == "v1":
        b_left = egocentric.chronological(b_left)
    items: list[tuple[tuple[Any, ...], UnionItem]] = []
    for tier in ACTION_TIERS:
        pairs = _tier_pairs(a_left, b_left, tier, tolerance, version)
        for i, j in pairs:
            a, b = a_left[i], b_left[j]
            items.append(((min(a.start, b.start), a.index, b.index), _action_item(a, b, tier)))
        used_a = {i for i, _ in pairs}
        used_b = {j for _, j in pairs}
        a_left = [x for k, x in enumerate(a_left) if k not in used_a]
        b_left = [x for k, x in enumerate(b_left) if k not in used_b]
    paired_a = {item.a_index for _, item in items}
    paired_b = {item.b_index for _, item in items}
    starts_a = {action.index: action.start for action in _usable(a_list)}
    starts_b = {action.index: action.start for action in _usable(b_list)}
    for index in range(len(a_list)):
        if index not in paired_a:
            key: tuple[float, float, int] = (starts_a.get(index, math.inf), index, -1)
            items.append((key, UnionItem("a_only", index, None)))
    for index in range(len(b_list)):
        if index not in paired_b:
            key = (starts_b.get(index, math.inf), math.inf, index)
            items.append((key, UnionItem("b_only", None, index)))
    items.sort(key=lambda entry: entry[0])
    return [item for _, item in items]


# ---------------------------------------------------------------------- break points


@dataclass(frozen=True)
class BreakPointPair:
    """A scorer pair of break-point events, with the exact credit it earns."""

    pred_index: int
    ref_index: int
    correct_summary_fields: tuple[str, ...]
    summary_accuracy: Fraction
    shot_atoms: int
    shot_denominator: int
    shot_accuracy: Fraction
    event_credit: Fraction
    shot_alignment: tuple[tuple[int, int, int], ...]  # (pred token, ref token, atoms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pred_index": self.pred_index,
            "ref_index": self.ref_index,
            "correct_summary_fields": list(self.correct_summary_fields),
            "summary_accuracy": round(float(self.summary_accuracy), 4),
            "shot_atoms": self.shot_atoms,
            "shot_denominator": self.shot_denominator,
            "shot_accuracy": round(float(self.shot_accuracy), 4),
            "event_credit": round(float(self.event_credit), 4),
            "event_credit_exact": str(self.event_credit),
            "shot_alignment": [list(step) for step in self.shot_alignment],
        }


def _event_list(events: object) -> list[Any]:
    if isinstance(events, Mapping):
        events = events.get("break_points")
    if not isinstance(events, list):
        raise ParameterError("a break-point ledger is a list or {'break_points': [...]}")
    try:
        tennis.check_caps(events)
    except ValueError as error:
        raise CapExceeded(str(error)) from None
    return events


def align_break_points(pred: object, ref: object, *, version: str = "v1") -> list[BreakPointPair]:
    """The exact weighted-LCS alignment of ``hierarchical-bottleneck-<version>``."""
    _check_version(version, tennis.VERSIONS)
    predictions = [tennis.view(event) for event in _event_list(pred)]
    references = [tennis.view(event) for event in _event_list(ref)]
    best, qualities = tennis.align_views(predictions, references, version)
    result = []
    for i, j in best[5]:
        quality = qualities[(i, j)]
        denominator = quality.shot_denominator
        result.append(
            BreakPointPair(
                pred_index=i,
                ref_index=j,
                correct_summary_fields=quality.correct_fields,
                summary_accuracy=Fraction(quality.summary_correct, len(tennis.SUMMARY_FIELDS)),
                shot_atoms=quality.atoms,
                shot_denominator=denominator,
                shot_accuracy=Fraction(quality.atoms, denominator) if denominator else Fraction(0),
                event_credit=quality.credit,
                shot_alignment=tuple(tennis.shot_alignment(predictions[i].tokens, references[j].tokens, version)),
            )
        )
    return result


def _same_field(a: Any, b: Any, field: str) -> bool:
    a_has = isinstance(a, Mapping) and field in a
    b_has = isinstance(b, Mapping) and field in b
    if not (a_has and b_has):
        return a_has == b_has
    return type(a[field]) is type(b[field]) and a[field] == b[field]


def break_point_differences(a: object, b: object) -> tuple[str, ...]:
    """Names of the identity and summary fields that differ, plus ``shots``."""
    differing = [field for field in tennis.SCALAR_FIELDS if not _same_field(a, b, field)]
    if tennis.shot_tokens(a) != tennis.shot_tokens(b):
        differing.append("shots")
    return tuple(differing)


NEAR_IDENTITY_MIN_EQUAL = 5


def _near_identity_pairs(a: list[Any], b: list[Any]) -> list[tuple[int, int]]:
    """Order-preserving pairs maximising equal identity fields, each pair sharing at
    least ``NEAR_IDENTITY_MIN_EQUAL`` of the 7 identity values."""

    def weight(x: object, y: object) -> int:
        equal = sum(_same_field(x, y, field) for field in tennis.IDENTITY_FIELDS)
        return equal if equal >= NEAR_IDENTITY_MIN_EQUAL else 0

    table: list[list[tuple[int, tuple[tuple[int, int], ...]]]] = [[(0, ())] * (len(b) + 1)]
    for i, x in enumerate(a):
        row: list[tuple[int, tuple[tuple[int, int], ...]]] = [(0, ())]
        for j, y in enumerate(b, start=1):
            best = max(table[i][j], row[j - 1], key=lambda state: state[0])
            w = weight(x, y)
            if w and table[i][j - 1][0] + w > best[0]:
                best = (table[i][j - 1][0] + w, table[i][j - 1][1] + ((i, j - 1),))
            row.append(best)
        table.append(row)
    return list(table[-1][-1][1])


def union_break_points(a: object, b: object, *, version: str = "v1") -> list[UnionItem]:
    """Union of two break-point ledgers.

    Tier ``identity`` is the scorer's alignment (equal identity keys, weighted LCS);
    tier ``near_identity`` pairs leftovers in order when at least 5 of the 7 identity
    values agree. ``differing_fields`` names identity/summary fields and ``shots``.
    """
    _check_version(version, tennis.VERSIONS)
    a_list, b_list = _event_list(a), _event_list(b)
    items: list[UnionItem] = []
    for pair in align_break_points(a_list, b_list, version=version):
        items.append(_break_point_item(a_list, b_list, pair.pred_index, pair.ref_index, "identity"))
    paired_a = {item.a_index for item in items}
    paired_b = {item.b_index for item in items}
    rest_a = [k for k in range(len(a_list)) if k not in paired_a]
    rest_b = [k for k in range(len(b_list)) if k not in paired_b]
    near = _near_identity_pairs([a_list[k] for k in rest_a], [b_list[k] for k in rest_b])
    for i, j in near:
        items.append(_break_point_item(a_list, b_list, rest_a[i], rest_b[j], "near_identity"))
    paired_a |= {rest_a[i] for i, _ in near}
    paired_b |= {rest_b[j] for _, j in near}
    items.extend(UnionItem("a_only", k, None) for k in range(len(a_list)) if k not in paired_a)
    items.extend(UnionItem("b_only", None, k) for k in range(len(b_list)) if k not in paired_b)

    def order(item: UnionItem) -> tuple[Any, ...]:
        a_key = item.a_index if item.a_index is not None else math.inf
        b_key = item.b_index if item.b_index is not None else math.inf
        return (min(a_key, b_key), a_key, b_key)

    return sorted(items, key=order)


def _break_point_item(a_list: list[Any], b_list: list[Any], i: int, j: int, tier: str) -> UnionItem:
    differing = break_point_differences(a_list[i], b_list[j])
    return UnionItem(
        status="conflicting" if differing else "agreed",
        a_index=i,
        b_index=j,
        tier=tier,
        differing_fields=differing,
    )


# --------------------------------------------------------------------------- moments


def _moment_list(events: object) -> list[Any]:
    if isinstance(events, Mapping):
        events = events.get("queries")
    if not isinstance(events, list):
        raise ParameterError("a moment ledger is a list or {'queries': [...]}")
    if len(events) > LEDGER_EVENT_CAPS["moments"]:
        raise CapExceeded(f"more than {LEDGER_EVENT_CAPS['moments']} queries")
    return events


def moment_intervals(event: object) -> tuple[tuple[float, float], ...] | None:
    """The sorted, de-duplicated intervals of a moment event (None when malformed)."""
    intervals = event.get("intervals") if isinstance(event, Mapping) else None
    if not isinstance(intervals, list):
        return None
    result = set()
    for interval in intervals:
        if (
            not isinstance(interval, (list, tuple))
            or len(interval) != 2
            or not all(moments.is_finite_number(t) for t in interval)
        ):
            return None
        result.add((interval[0], interval[1]))
    return tuple(sorted(result))


def union_moments(a: object, b: object) -> list[UnionItem]:
    """Union of two moment-query ledgers (events ``{"query_id", "query", "intervals"}``).

    Events pair by ``query_id`` (the first event with an id on each side); a pair is
    ``agreed`` when the interval sets (and query texts) are equal, otherwise
    ``conflicting``. Deltas compare the first intervals, in seconds (B minus A).
    """
    a_list, b_list = _moment_list(a), _moment_list(b)

    def first_by_id(events: list[Any]) -> dict[str | int, int]:
        index: dict[str | int, int] = {}
        for k, event in enumerate(events):
            query_id = event.get("query_id") if isinstance(event, Mapping) else None
            if isinstance(query_id, (str, int)) and not isinstance(query_id, bool):
                index.setdefault(query_id, k)
        return index

    a_ids, b_ids = first_by_id(a_list), first_by_id(b_list)
    items = []
    for query_id, i in a_ids.items():
        j = b_ids.get(query_id)
        if j is None:
            continue
        x, y = a_list[i], b_list[j]
        xi, yi = moment_intervals(x), moment_intervals(y)
        differing = []
        if xi is None or yi is None or xi != yi:
            differing.append("intervals")
        if x.get("query") != y.get("query"):
            differing.append("query")
        start_delta = end_delta = None
        if xi and yi:
            start_delta, end_delta = yi[0][0] - xi[0][0], yi[0][1] - xi[0][1]
        items.append(
            UnionItem(
                "conflicting" if differing else "agreed",
                i,
                j,
                "query_id",
                tuple(differing),
                start_delta,
                end_delta,
            )
        )
    paired_a = {item.a_index for item in items}
    paired_b = {item.b_index for item in items}
    items.extend(UnionItem("a_only", k, None) for k in range(len(a_list)) if k not in paired_a)
    items.extend(UnionItem("b_only", None, k) for k in range(len(b_list)) if k not in paired_b)

    def order(item: UnionItem) -> tuple[Any, ...]:
        a_key = item.a_index if item.a_index is not None else math.inf
        b_key = item.b_index if item.b_index is not None else math.inf
        return (a_key, b_key)

    return sorted(items, key=order)
