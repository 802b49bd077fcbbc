"""Action-ledger F1: ``egocentric-f1-v2`` (published verifier) and ``egocentric-f1-v1``.

See SCORING.md section 1. The submission is ``{"actions": [...]}``; each entry is
checked in a fixed order, invalid entries still count as predictions, and the reward
is the F1 of exact (verb, noun set, both boundaries within ``tolerance``) matches:

* ``v2``: a maximum one-to-one matching, order does not matter;
* ``v1``: the longest order-preserving matching of the submitted order against the
  ground truth in chronological order.
"""

from bisect import bisect_left, bisect_right
from collections import namedtuple
from collections.abc import Callable, Iterable, Mapping, Sequence

from ._annotations import TYPE_CHECKING, Any
from ._records import dataclass
from .constants import (
    EGOCENTRIC_DEFAULT_TOLERANCE,
    EGOCENTRIC_DEPTH_LIMIT,
    EGOCENTRIC_MAX_BYTES,
    EGOCENTRIC_PUBLISHED_FRAME_COUNT,
)
from .errors import GroundTruthError, ParameterError
from .jsonio import decode_json_document, dumps_indented
from .matching import longest_ordered_matching, maximum_matching
from .measures import f1
from .results import ScoreResult

DEFAULT_TOLERANCE = EGOCENTRIC_DEFAULT_TOLERANCE
PUBLISHED_FRAME_COUNT = EGOCENTRIC_PUBLISHED_FRAME_COUNT  # the published GTEA Gaze+ video
MAX_SOLUTION_BYTES = EGOCENTRIC_MAX_BYTES
DEPTH_LIMIT = EGOCENTRIC_DEPTH_LIMIT  # deepest nesting the published judge parses
MAX_PREDICTED_ACTIONS = 2000
REQUIRED_KEYS = frozenset({"verb", "nouns", "start_frame", "end_frame"})
VERSIONS = ("v1", "v2")


if TYPE_CHECKING:  # the same record, with its field types (``typing`` stays off the score path)
    from typing import NamedTuple

    class Action(NamedTuple):
        index: int  # type: ignore[assignment]  # a field named like tuple.index, as at run time
        verb: str
        nouns: frozenset[str]
        start: int
        end: int
else:
    Action = namedtuple("Action", "index verb nouns start end")
Action.__doc__ = """A validated action (index, verb, nouns frozenset, start, end); ``index`` is
its position in the list it came from."""


@dataclass(frozen=True)
class EgocentricTask:
    """The task parameters of one ground-truth version."""

    ground_truth: tuple[Action, ...]
    verbs: frozenset[Any]
    nouns: frozenset[Any]
    frame_count: int
    tolerance: int


@dataclass(frozen=True)
class ParsedSubmission:
    valid: tuple[Action, ...]
    predicted_count: int
    reason: str


class _EntryInvalid(Exception):
    """An entry fails a per-entry check (never escapes this module)."""


# --------------------------------------------------------------------------- params


def _check_int(name: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def ground_truth_actions(ground_truth: object) -> list[dict[str, Any]]:
    """The list of ground-truth action objects (``{"actions": [...]}`` or a list)."""
    actions = ground_truth.get("actions") if isinstance(ground_truth, Mapping) else ground_truth
    if not isinstance(actions, list):
        raise GroundTruthError("ground truth must be an object with an 'actions' list")
    return actions


def _ground_truth_action(index: int, item: object) -> Action:
    if not isinstance(item, Mapping) or not REQUIRED_KEYS.issubset(item):
        raise GroundTruthError(f"ground-truth action {index + 1} lacks verb/nouns/frames")
    verb, nouns = item["verb"], item["nouns"]
    start, end = item["start_frame"], item["end_frame"]
    if not isinstance(verb, str) or not isinstance(nouns, list) or not nouns:
        raise GroundTruthError(f"ground-truth action {index + 1} has a bad verb or nouns")
    if not all(isinstance(noun, str) for noun in nouns):
        raise GroundTruthError(f"ground-truth action {index + 1} has a non-string noun")
    for value in (start, end):
        if isinstance(value, bool) or not isinstance(value, int):
            raise GroundTruthError(f"ground-truth action {index + 1} has non-integer frames")
    return Action(index, verb, frozenset(nouns), start, end)


def _vocabulary(vocabulary: object, actions: Sequence[Action]) -> tuple[frozenset[Any], frozenset[Any]]:
    verbs: Any
    nouns: Any
    if vocabulary is None:
        verbs = frozenset(action.verb for action in actions)
        nouns = frozenset(noun for action in actions for noun in action.nouns)
        return verbs, nouns
    if isinstance(vocabulary, Mapping):
        verbs, nouns = vocabulary.get("verbs"), vocabulary.get("nouns")
    elif isinstance(vocabulary, (tuple, list)) and len(vocabulary) == 2:
        verbs, nouns = vocabulary
    else:
        raise ParameterError("vocabulary must be {'verbs': [...], 'nouns': [...]}")
    for name, values in (("verbs", verbs), ("nouns", nouns)):
        if not isinstance(values, (list, tuple, set, frozenset)) or not all(isinstance(value, str) for value in values):
            raise ParameterError(f"vocabulary {name} must be a list of strings")
    return frozenset(verbs), frozenset(nouns)


def build_task(
    ground_truth: object,
    *,
    frame_count: int | None = None,
    tolerance: int = DEFAULT_TOLERANCE,
    vocabulary: object = None,
) -> EgocentricTask:
    """Validate the ground truth and the task parameters.

    ``frame_count`` is required (the published ground-truth file does not carry it;
    the published video has 25692 frames). A ``frame_count`` key in the ground-truth
    object is used when the parameter is not given. ``vocabulary`` defaults to the
    verbs and nouns of the ground truth, as the published verifier derives it.
    """
    if frame_count is None and isinstance(ground_truth, Mapping):
        frame_count = ground_truth.get("frame_count")
    if frame_count is None:
        raise ParameterError(
            "frame_count is required for the egocentric scorers "
            f"(the published video has {PUBLISHED_FRAME_COUNT} frames)"
        )
    frame_count = _check_int("frame_count", frame_count, minimum=1)
    tolerance = _check_int("tolerance", tolerance, minimum=0)
    actions = [_ground_truth_action(index, item) for index, item in enumerate(ground_truth_actions(ground_truth))]
    verbs, nouns = _vocabulary(vocabulary, actions)
    return EgocentricTask(tuple(actions), verbs, nouns, frame_count, tolerance)


# ----------------------------------------------------------------------- submission


def _validate_entry(entry: object, task: EgocentricTask, previous_start: int, index: int = -1) -> Action:
    """Apply checks 1-9 of SCORING.md section 1 in order.

    Raises ``_EntryInvalid`` with the failure text, or ``TypeError`` when a verb or
    noun cannot be looked up in a set (that aborts the whole file).
    """
    if not isinstance(entry, dict):
        raise _EntryInvalid("must be an object")
    if not REQUIRED_KEYS.issubset(entry):
        raise _EntryInvalid("is missing required fields")
    verb = entry["verb"]
    if verb not in task.verbs:
        raise _EntryInvalid("has a verb outside the vocabulary")
    nouns = entry["nouns"]
    if not isinstance(nouns, list) or not nouns:
        raise _EntryInvalid("must list at least one noun")
    if any(noun not in task.nouns for noun in nouns):
        raise _EntryInvalid("has a noun outside the vocabulary")
    if len(set(nouns)) != len(nouns):
        raise _EntryInvalid("repeats a noun")
    start, end = entry["start_frame"], entry["end_frame"]
    for value in (start, end):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _EntryInvalid("has non-integer frame numbers")
    if not 0 <= start < end < task.frame_count:
        raise _EntryInvalid("has frame numbers outside the video")
    if start < previous_start:
        raise _EntryInvalid("is not in chronological order")
    return Action(index, verb, frozenset(nouns), start, end)


def _parse_document(data: bytes) -> list[Any]:
    if len(data) > MAX_SOLUTION_BYTES:
        raise ValueError(f"solution exceeds {MAX_SOLUTION_BYTES} bytes")
    document = decode_json_document(data, DEPTH_LIMIT)
    if not isinstance(document, dict) or "actions" not in document:
        raise ValueError("solution must be an object containing actions")
    actions = document["actions"]
    if not isinstance(actions, list):
        raise ValueError("actions must be a list")
    if len(actions) > MAX_PREDICTED_ACTIONS:
        raise ValueError(f"actions exceeds the maximum of {MAX_PREDICTED_ACTIONS}")
    return actions


def validate_actions(actions: list[Any], task: EgocentricTask) -> tuple[list[Action], list[str]]:
    """Validate submitted entries; returns the valid actions and the failure messages.

    Raises ``TypeError`` when an unhashable verb or noun is looked up (whole-file abort).
    """
    valid: list[Action] = []
    messages: list[str] = []
    previous_start = -1
    for position, entry in enumerate(actions, start=1):
        try:
            action = _validate_entry(entry, task, previous_start, position - 1)
        except _EntryInvalid as failure:
            messages.append(f"action {position} {failure}")
            continue
        previous_start = action.start
        valid.append(action)
    return valid, messages


def parse_submission(solution: bytes | BaseException, task: EgocentricTask) -> ParsedSubmission:
    """Parse and validate raw submission bytes; never raises.

    ``solution`` may be an exception raised while reading the file (the file layer's
    rejection); it becomes ``invalid solution: <message>``.
    """
    try:
        if isinstance(solution, BaseException):
            raise solution
        if not isinstance(solution, (bytes, bytearray, memoryview)):
            raise TypeError("solution must be bytes")
        entries = _parse_document(bytes(solution))
        valid, messages = validate_actions(entries, task)
    except Exception as error:  # a malformed submission scores 0 with the reason
        return ParsedSubmission((), 0, f"invalid solution: {error}")
    reason = "; ".join(messages[:10]) if messages else "ok"
    return ParsedSubmission(tuple(valid), len(entries), reason)


# ------------------------------------------------------------------------- matching

Predicate = Callable[[Action, Action], bool]


def full_match(prediction: Action, truth: Action) -> bool:
    return prediction.verb == truth.verb and prediction.nouns == truth.nouns


def verb_match(prediction: Action, truth: Action) -> bool:
    return prediction.verb == truth.verb


def boundary_match(prediction: Action, truth: Action) -> bool:
    return True


PREDICATES: dict[str, Predicate] = {
    "full": full_match,
    "verb_and_boundary": verb_match,
    "boundary_only": boundary_match,
}


def chronological(actions: Iterable[Action]) -> list[Action]:
    """Stable sort by start frame (the published key is already in this order)."""
    return sorted(actions, key=lambda action: action.start)


def localized_candidates(predictions: Sequence[Action], truths: Sequence[Action], tolerance: int) -> list[list[int]]:
    """For each prediction, the truth positions with both boundaries within
    ``tolerance``, closest boundaries first (ties: lower position)."""
    order = sorted(range(len(truths)), key=lambda k: (truths[k].start, k))
    starts = [truths[k].start for k in order]
    result: list[list[int]] = []
    for prediction in predictions:
        start, end = prediction.start, prediction.end
        low = bisect_left(starts, start - tolerance)
        high = bisect_right(starts, start + tolerance)
        found = []
        for position in range(low, high):
            k = order[position]
            truth = truths[k]
            if -tolerance <= end - truth.end <= tolerance:
                found.append((abs(start - truth.start) + abs(end - truth.end), k))
        found.sort()
        result.append([k for _, k in found])
    return result


def filter_candidates(
    localized: Sequence[Sequence[int]],
    predictions: Sequence[Action],
    truths: Sequence[Action],
    predicate: Predicate,
) -> list[list[int]]:
    """Keep the localized candidates that also satisfy ``predicate`` (order kept)."""
    if predicate is boundary_match:
        return [list(ks) for ks in localized]
    return [
        [k for k in ks if predicate(prediction, truths[k])]
        for prediction, ks in zip(predictions, localized, strict=True)
    ]


def candidate_lists(
    predictions: Sequence[Action], truths: Sequence[Action], predicate: Predicate, tolerance: int
) -> list[list[int]]:
    """For each prediction, the truth positions it matches, closest boundaries first."""
    localized = localized_candidates(predictions, truths, tolerance)
    return filter_candidates(localized, predictions, truths, predicate)


def solve_matching(candidates: Sequence[Sequence[int]], n_truths: int, version: str) -> list[tuple[int, int]]:
    """``v1``: longest order-preserving matching; ``v2``: maximum matching."""
    if version == "v1":
        return longest_ordered_matching(candidates)
    return maximum_matching(candidates, n_truths)


def match_actions(
    predictions: Sequence[Action],
    truths: Sequence[Action],
    *,
    tolerance: int,
    version: str,
    predicate: Predicate = full_match,
) -> list[tuple[int, int]]:
    """Matched (prediction position, truth position) pairs under the scorer's rule.

    For ``v1`` ``truths`` must already be in chronological order.
    """
    candidates = candidate_lists(predictions, truths, predicate, tolerance)
    return solve_matching(candidates, len(truths), version)


# -------------------------------------------------------------------------- scoring


def _counts(
    valid: Sequence[Action], predicted_count: int, task: EgocentricTask, version: str
) -> tuple[float, dict[str, Any]]:
    truths = list(task.ground_truth)
    if version == "v1":
        truths = chronological(truths)

    localized = localized_candidates(valid, truths, task.tolerance)

    def matched(predicate: Predicate) -> int:
        candidates = filter_candidates(localized, valid, truths, predicate)
        return len(solve_matching(candidates, len(truths), version))

    true_positives = matched(full_match)
    precision = true_positives / predicted_count if predicted_count else 0.0
    recall = true_positives / len(truths) if truths else 0.0
    reward = f1(precision, recall)
    return reward, {
        "ground_truth_actions": len(truths),
        "predicted_actions": predicted_count,
        "valid_predicted_actions": len(valid),
        "invalid_predicted_actions": predicted_count - len(valid),
        "true_positives": true_positives,
        "false_positives": predicted_count - true_positives,
        "false_negatives": len(truths) - true_positives,
        "precision": round(precision, 6),
        "recall": round(recall, 6),
        "f1": round(reward, 6),
        "frame_tolerance": task.tolerance,
        "verb_and_boundary_matches": matched(verb_match),
        "boundary_only_matches": matched(boundary_match),
    }


def score(
    version: str,
    ground_truth: object,
    solution: bytes | BaseException,
    *,
    frame_count: int | None = None,
    tolerance: int = DEFAULT_TOLERANCE,
    vocabulary: object = None,
) -> ScoreResult:
    """Score one submission; the bytes are those of the published ``judge.py``."""
    if version not in VERSIONS:
        raise ParameterError(f"unknown egocentric version {version!r}")
    task = build_task(ground_truth, frame_count=frame_count, tolerance=tolerance, vocabulary=vocabulary)
    parsed = parse_submission(solution, task)
    reward, counts = _counts(parsed.valid, parsed.predicted_count, task, version)
    rewards = {"reward": round(reward, 6), **counts}
    details = {**rewards, "reason": parsed.reason}
    return ScoreResult(
        reward=rewards["reward"],
        reward_json=dumps_indented(rewards, newline=True),
        reward_txt=f"{round(reward, 6)}\n".encode(),
        details_json=dumps_indented(details, newline=True),
        details=details,
        reason=parsed.reason,
        scorer_id=f"egocentric-f1-{version}",
    )


def encode_ledger(actions: Sequence[Mapping[str, Any]]) -> bytes:
    """Submission bytes for a list of action objects (used by anchors and agreement)."""
    import json

    return json.dumps({"actions": list(actions)}).encode("utf-8")
