"""Break-point ledger: ``hierarchical-bottleneck-v1`` (published) and ``-v2``.

See SCORING.md section 2. Events pair in order (a weighted LCS) only when their
seven identity values are equal; a pair earns min(summary credit, shot accuracy)
computed with exact fractions; reward = 2 * sum(credit) / (n_predicted + n_reference).

``v2`` scores shot token 0 on its direction only: the stroke of a diagonal step
pairing token 0 with token 0 earns nothing and each side's shot denominator is
2 * len(tokens) - 1 for a non-empty list.
"""

from _operator import eq
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, compress
from math import gcd, lcm

from ._annotations import TYPE_CHECKING, Any
from ._records import dataclass
from ._records import field as dataclass_field
from .constants import TENNIS_DEPTH_LIMIT, TENNIS_MAX_BYTES
from .errors import GroundTruthError, ParameterError
from .jsonio import decode_json_document, dumps_indented
from .measures import f1
from .results import ScoreResult

if TYPE_CHECKING:
    from fractions import Fraction

MAX_PREDICTED_EVENTS = 256
MAX_SHOTS_PER_EVENT = 512
MAX_TOTAL_PREDICTED_SHOTS = 4096
VERSIONS = ("v1", "v2")
# ours, applied by the server's upload and file layers, not by the scorer: the published
# judge (and ``python -m scoring score``, its drop-in) reads and scores a file of any size
MAX_SOLUTION_BYTES = TENNIS_MAX_BYTES
DEPTH_LIMIT = TENNIS_DEPTH_LIMIT  # deepest nesting the published judge parses

IDENTITY_FIELDS = (
    "set",
    "medvedev_games",
    "de_minaur_games",
    "medvedev_points",
    "de_minaur_points",
    "server",
    "opportunity",
)
SUMMARY_FIELDS = (
    "outcome",
    "first_serve_in",
    "serve_direction",
    "rally_shots",
    "terminal_player",
    "terminal_stroke",
    "terminal_court_position",
    "terminal_result",
    "terminal_error",
)
SHOT_FIELDS = ("stroke", "direction")
SCALAR_FIELDS = IDENTITY_FIELDS + SUMMARY_FIELDS
EVENT_FIELDS = frozenset(SCALAR_FIELDS + ("shots",))
FIELD_TYPES: dict[str, type] = {
    "set": int,
    "medvedev_games": int,
    "de_minaur_games": int,
    "medvedev_points": str,
    "de_minaur_points": str,
    "server": str,
    "opportunity": int,
    "outcome": str,
    "first_serve_in": bool,
    "serve_direction": str,
    "rally_shots": int,
    "terminal_player": str,
    "terminal_stroke": str,
    "terminal_court_position": str,
    "terminal_result": str,
    "terminal_error": str,
}

FORMULA = "2 * sum(min(per_event_summary_accuracy, per_event_ordered_shot_accuracy)) / (n_predicted + n_reference)"
EXACT_EVENT_FORMULA = "2 * exact_ordered_event_matches / (n_predicted + n_reference)"

Token = tuple[str | None, str | None]  # (stroke or None, direction or None)
# a state of the event alignment: (credit in units of 1 / scale, pairs, summary fields,
# shot atoms, summed shot denominator, the pairs (i, j))
_State = tuple[int, int, int, int, int, tuple[tuple[int, int], ...]]


# --------------------------------------------------------------------- event atoms


def identity_key(event: object) -> tuple[Any, ...] | None:
    """The 7 identity values, or None when one is missing or mistyped."""
    if not isinstance(event, dict):
        return None
    values = []
    for field in IDENTITY_FIELDS:
        if field not in event or type(event[field]) is not FIELD_TYPES[field]:
            return None
        values.append(event[field])
    return tuple(values)


def summary_value(event: object, field: str) -> object:
    """The typed value of a summary field, or a sentinel that equals nothing."""
    if isinstance(event, dict) and field in event:
        value = event[field]
        if type(value) is FIELD_TYPES[field]:
            return value
    return _MISSING


class _Missing:
    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def shot_token(shot: object) -> Token:
    if not isinstance(shot, dict):
        return (None, None)
    stroke, direction = shot.get("stroke"), shot.get("direction")
    return (stroke if type(stroke) is str else None, direction if type(direction) is str else None)


def shot_tokens(event: object) -> list[Token]:
    if not isinstance(event, dict) or "shots" not in event:
        return []
    shots = event["shots"]
    if not isinstance(shots, list):
        return [(None, None)]
    return [
        (
            stroke if type(stroke := shot.get("stroke")) is str else None,
            direction if type(direction := shot.get("direction")) is str else None,
        )
        if isinstance(shot, dict)
        else (None, None)
        for shot in shots
    ]


@dataclass(frozen=True)
class EventView:
    """What the scorer reads from one event."""

    key: tuple[Any, ...] | None
    summary: tuple[Any, ...]
    tokens: tuple[Any, ...]


_SUMMARY_FIELD_SET = frozenset(SUMMARY_FIELDS)


_IDENTITY_KINDS = tuple(FIELD_TYPES[field] for field in IDENTITY_FIELDS)
_SUMMARY_KINDS = tuple(FIELD_TYPES[field] for field in SUMMARY_FIELDS)


def view(event: object) -> EventView:
    """:func:`identity_key`, :func:`summary_value` of every summary field and
    :func:`shot_tokens`, in one pass."""
    if not isinstance(event, dict):
        return EventView(None, (_MISSING,) * len(SUMMARY_FIELDS), ())
    get = event.get
    # A missing field reads as None, whose type is none of the field types.
    identity = tuple(map(get, IDENTITY_FIELDS))
    key = identity if tuple(map(type, identity)) == _IDENTITY_KINDS else None
    summary = tuple(map(get, SUMMARY_FIELDS))
    if tuple(map(type, summary)) != _SUMMARY_KINDS:  # some value missing or mistyped
        summary = tuple(
            [value if type(value) is kind else _MISSING for value, kind in zip(summary, _SUMMARY_KINDS, strict=True)]
        )
    return EventView(key, summary, tuple(shot_tokens(event)))


def shot_side_denominator(length: int, version: str) -> int:
    if version == "v2" and length:
        return 2 * length - 1
    return 2 * length


def _step_credit(p: Token, r: Token, serve_pair: bool) -> int:
    credit = 0
    if not serve_pair and p[0] is not None and p[0] == r[0]:
        credit += 1
    if p[1] is not None and p[1] == r[1]:
        credit += 1
    return credit


def shot_atom_table(predicted: Sequence[Token], reference: Sequence[Token], version: str) -> list[list[int]]:
    """The full order-preserving DP table of shot atoms (rows: predicted tokens)."""
    v2 = version == "v2"
    table = [[0] * (len(reference) + 1)]
    previous = table[0]
    for i, p in enumerate(predicted):
        current = [0]
        for j, r in enumerate(reference, start=1):
            diagonal = previous[j - 1] + _step_credit(p, r, v2 and i == 0 and j == 1)
            best = previous[j] if previous[j] > current[-1] else current[-1]
            current.append(diagonal if diagonal > best else best)
        table.append(current)
        previous = current
    return table


def shot_atoms(predicted: Sequence[Token], reference: Sequence[Token], version: str) -> int:
    """Atoms of the best order-preserving alignment of two token lists (the DP of
    :func:`shot_atom_table`, one row at a time)."""
    if not predicted or not reference:
        return 0
    shorter, longer = (predicted, reference) if len(predicted) <= len(reference) else (reference, predicted)
    if tuple(longer[: len(shorter)]) == tuple(shorter):
        # Each token pairs at most once and earns at most its present fields, so no
        # alignment earns more than ``present``; aligning the common prefix position
        # by position earns all of it, except in v2 the stroke of token 0 (when it has
        # one). Then ``present`` is reached only by pairing every token with fields to
        # a token equal on them, token 0 past token 0 (the greedy test below); when
        # none does, the position-by-position alignment's ``present - 1`` is optimal.
        present = sum((stroke is not None) + (direction is not None) for stroke, direction in shorter)
        if version == "v1" or shorter[0][0] is None or _embeds_past_token_0(shorter, longer):
            return present
        return present - 1
    strokes = [r[0] for r in reference]
    directions = [r[1] for r in reference]
    previous = [0] * (len(reference) + 1)
    for i, (stroke, direction) in enumerate(predicted):
        credits = [
            (stroke is not None and stroke == s) + (direction is not None and direction == d)
            for s, d in zip(strokes, directions, strict=True)
        ]
        if i == 0 and version == "v2" and stroke is not None and stroke == strokes[0]:
            credits[0] -= 1  # token 0 paired with token 0: the stroke earns nothing
        current = [0]
        left = 0
        for j, credit in enumerate(credits):
            up = previous[j + 1]
            best = left if left > up else up
            diagonal = previous[j] + credit
            left = diagonal if diagonal > best else best
            current.append(left)
        previous = current
    return previous[-1]


def _embeds_past_token_0(shorter: Sequence[Token], longer: Sequence[Token]) -> bool:
    """Whether an order-preserving alignment pairs every token of ``shorter`` that has
    a field with a token of ``longer`` equal on each of its fields, token 0 with a
    token after token 0: the v2 alignments earning every present field of ``shorter``
    (tokens without fields earn nothing and may stay unpaired). Greedy leftmost
    placement finds one whenever one exists."""
    position = 1  # token 0 (which has a stroke here) must pair past longer's token 0
    for stroke, direction in shorter:
        if stroke is None and direction is None:
            continue
        while position < len(longer):
            other = longer[position]
            position += 1
            if (stroke is None or stroke == other[0]) and (direction is None or direction == other[1]):
                break
        else:
            return False
    return True


def shot_alignment(predicted: Sequence[Token], reference: Sequence[Token], version: str) -> list[tuple[int, int, int]]:
    """(predicted token, reference token, atoms earned) for the diagonal steps of one
    optimal shot alignment (backtracked deterministically, preferring diagonals)."""
    table = shot_atom_table(predicted, reference, version)
    v2 = version == "v2"
    steps = []
    i, j = len(predicted), len(reference)
    while i and j:
        credit = _step_credit(predicted[i - 1], reference[j - 1], v2 and i == 1 and j == 1)
        if credit and table[i][j] == table[i - 1][j - 1] + credit:
            steps.append((i - 1, j - 1, credit))
            i, j = i - 1, j - 1
        elif table[i][j] == table[i - 1][j]:
            i -= 1
        else:
            j -= 1
    steps.reverse()
    return steps


@dataclass(frozen=True)
class PairQuality:
    """The quality of one prediction/reference pair; the credit is the exact ratio
    ``credit_numerator / credit_denominator`` (in lowest terms)."""

    credit_numerator: int
    credit_denominator: int
    correct_fields: tuple[str, ...]
    atoms: int
    predicted_denominator: int
    reference_denominator: int

    @property
    def credit(self) -> "Fraction":
        """The credit as a ``fractions.Fraction``."""
        from fractions import Fraction

        return Fraction(self.credit_numerator, self.credit_denominator)

    @property
    def summary_correct(self) -> int:
        return len(self.correct_fields)

    @property
    def shot_denominator(self) -> int:
        predicted, referenced = self.predicted_denominator, self.reference_denominator
        return predicted if predicted > referenced else referenced


def pair_quality(prediction: EventView, reference: EventView, version: str) -> PairQuality:
    # the fields whose values are present and equal (_MISSING equals nothing, itself included)
    fields = tuple(compress(SUMMARY_FIELDS, map(eq, prediction.summary, reference.summary)))
    atoms = shot_atoms(prediction.tokens, reference.tokens, version)
    predicted = shot_side_denominator(len(prediction.tokens), version)
    referenced = shot_side_denominator(len(reference.tokens), version)
    denominator = predicted if predicted > referenced else referenced
    # credit = min(summary / 9, atoms / denominator), exactly, in lowest terms
    if denominator and atoms * len(SUMMARY_FIELDS) < len(fields) * denominator:
        numerator, credit_denominator = atoms, denominator
    elif denominator:
        numerator, credit_denominator = len(fields), len(SUMMARY_FIELDS)
    else:  # no shot tokens on either side: shot accuracy 0
        numerator, credit_denominator = 0, 1
    common = gcd(numerator, credit_denominator)
    return PairQuality(numerator // common, credit_denominator // common, fields, atoms, predicted, referenced)


def exact_tokens(tokens: Sequence[Token], version: str) -> tuple[Any, ...]:
    """Tokens as compared for an exact event (v2 ignores token 0's stroke)."""
    if version == "v2" and tokens:
        return ((None, tokens[0][1]),) + tuple(tokens[1:])
    return tuple(tokens)


def same_exact_tokens(predicted: tuple[Any, ...], reference: tuple[Any, ...], version: str) -> bool:
    """``exact_tokens(predicted, version) == exact_tokens(reference, version)`` for
    tuples of tokens, without building either."""
    if predicted == reference:
        return True
    return (
        version == "v2"
        and len(predicted) == len(reference)
        and len(predicted) > 0
        and predicted[0][1] == reference[0][1]
        and predicted[1:] == reference[1:]
    )


def exact_event(prediction: EventView, reference: EventView, version: str) -> bool:
    return (
        prediction.key is not None
        and prediction.key == reference.key
        and all(p is not _MISSING and p == r for p, r in zip(prediction.summary, reference.summary, strict=True))
        and same_exact_tokens(tuple(prediction.tokens), tuple(reference.tokens), version)
    )


# ---------------------------------------------------------------------- alignment


def _better(candidate: _State, incumbent: _State) -> bool:
    """Larger credit, more pairs, more summary fields, more shot atoms, then smaller
    summed shot denominator, then the lexicographically smaller pair list."""
    if candidate is incumbent:  # the DP carries states forward unchanged: no Fraction compare
        return False
    for index in (0, 1, 2, 3):
        if candidate[index] != incumbent[index]:
            return candidate[index] > incumbent[index]  # type: ignore[operator]  # index < 4: ints
    if candidate[4] != incumbent[4]:
        return candidate[4] < incumbent[4]
    return candidate[5] < incumbent[5]


def _align_scaled(
    predictions: Sequence[EventView], references: Sequence[EventView], version: str
) -> tuple[_State, int, dict[tuple[int, int], PairQuality]]:
    """The weighted LCS with exact credits as integer multiples of 1 / ``scale``, where
    ``scale`` is the least common multiple of every pair credit's denominator, so that
    comparing and adding states never builds a ``Fraction``. Returns (best state,
    scale, qualities)."""
    positions: dict[tuple[Any, ...], list[int]] = {}
    for j, reference in enumerate(references):
        if reference.key is not None:
            positions.setdefault(reference.key, []).append(j)
    qualities: dict[tuple[int, int], PairQuality] = {}
    for i, prediction in enumerate(predictions):
        if prediction.key is not None:
            for j in positions.get(prediction.key, ()):
                qualities[(i, j)] = pair_quality(prediction, references[j], version)
    scale = lcm(1, *{quality.credit_denominator for quality in qualities.values()})
    steps = {
        (i, j): (
            quality.credit_numerator * (scale // quality.credit_denominator),
            quality.summary_correct,
            quality.atoms,
            quality.shot_denominator,
        )
        for (i, j), quality in qualities.items()
    }
    rows: dict[int, dict[int, tuple[int, int, int, int]]] = {}
    for (i, j), pair_step in steps.items():
        rows.setdefault(i, {})[j] = pair_step
    empty: _State = (0, 0, 0, 0, 0, ())
    previous = [empty] * (len(references) + 1)
    for i in sorted(rows):
        # A row without a pairable reference equals the row above (each DP row is
        # non-decreasing in the state order), so only rows with steps are computed.
        row = rows[i]
        first = min(row) + 1  # left of the first step the row equals the row above, too
        current = previous[:first]
        for j in range(first, len(references) + 1):
            best = previous[j]
            left = current[j - 1]
            if left is not best and _better(left, best):
                best = left
            step = row.get(j - 1)
            if step is not None:
                diagonal = previous[j - 1]
                candidate = (
                    diagonal[0] + step[0],
                    diagonal[1] + 1,
                    diagonal[2] + step[1],
                    diagonal[3] + step[2],
                    diagonal[4] + step[3],
                    diagonal[5] + ((i, j - 1),),
                )
                if _better(candidate, best):
                    best = candidate
            current.append(best)
        previous = current
    return previous[-1], scale, qualities


def align_views(
    predictions: Sequence[EventView], references: Sequence[EventView], version: str
) -> tuple[tuple[Any, ...], dict[tuple[int, int], PairQuality]]:
    """The scorer's weighted LCS. Returns the best state
    ``(credit, pairs, summary, atoms, denominator, ((i, j), ...))`` (credit a
    ``Fraction``) and the qualities of the paired events."""
    from fractions import Fraction

    best, scale, qualities = _align_scaled(predictions, references, version)
    return (Fraction(best[0], scale),) + best[1:], qualities


def ordered_pairs(pairs: Iterable[tuple[int, int]]) -> int:
    """Length of the longest chain of (i, j) pairs increasing in both: the LCS length
    when ``pairs`` are the equal positions (Hunt-Szymanski, O(p log p))."""
    tails: list[int] = []
    for _, j in sorted(pairs, key=lambda pair: (pair[0], -pair[1])):
        position = bisect_left(tails, j)
        if position == len(tails):
            tails.append(j)
        else:
            tails[position] = j
    return len(tails)


def ordered_count(predictions: Sequence[Any], references: Sequence[Any], equal: Callable[[Any, Any], bool]) -> int:
    """Plain LCS length with a custom equality."""
    previous = [0] * (len(references) + 1)
    for prediction in predictions:
        current = [0]
        for j, reference in enumerate(references, start=1):
            value = previous[j] if previous[j] > current[-1] else current[-1]
            if previous[j - 1] + 1 > value and equal(prediction, reference):
                value = previous[j - 1] + 1
            current.append(value)
        previous = current
    return previous[-1]


# ------------------------------------------------------------------------ scoring


def check_caps(predictions: list[Any]) -> None:
    """Raise ValueError when the submission is over a cap (before any quadratic step)."""
    if len(predictions) > MAX_PREDICTED_EVENTS:
        raise ValueError(f"break_points exceeds {MAX_PREDICTED_EVENTS} events")
    total = 0
    for event in predictions:
        if not isinstance(event, dict) or not isinstance(event.get("shots"), list):
            continue
        count = len(event["shots"])
        if count > MAX_SHOTS_PER_EVENT:
            raise ValueError(f"one shots array exceeds {MAX_SHOTS_PER_EVENT} entries")
        total += count
    if total > MAX_TOTAL_PREDICTED_SHOTS:
        raise ValueError(f"all shots arrays exceed {MAX_TOTAL_PREDICTED_SHOTS} entries")


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def _identity_counts(prediction_keys: list[Any], reference_keys: list[Any]) -> dict[str, Any]:
    reference_counts: dict[tuple[Any, ...] | None, int] = {}
    for key in reference_keys:
        reference_counts[key] = reference_counts.get(key, 0) + 1
    prediction_counts: dict[tuple[Any, ...], int] = {}
    for key in prediction_keys:
        if key is not None:
            prediction_counts[key] = prediction_counts.get(key, 0) + 1
    unordered = duplicates = false = 0
    for key, count in prediction_counts.items():
        available = reference_counts.get(key)
        if available is None:
            false += count
        else:
            unordered += min(count, available)
            duplicates += max(0, count - available)
    return {"unordered": unordered, "duplicates": duplicates, "false": false}


def _shot_schema_counts(predictions: list[Any], views: Sequence[EventView]) -> tuple[int, int]:
    schema_issues = invalid = 0
    for event, seen in zip(predictions, views, strict=True):
        if not isinstance(event, dict) or not isinstance(event.get("shots"), list):
            continue
        shots = event["shots"]
        # One token per shot, with None for a field that is not a string (a shot that
        # is not an object has two): none, and two keys per shot, is a clean list.
        if None not in chain.from_iterable(seen.tokens) and sum(map(len, shots)) == 2 * len(shots):
            continue
        for shot in shots:
            bad_values = (
                not isinstance(shot, dict)
                or type(shot.get("stroke")) is not str
                or type(shot.get("direction")) is not str
            )
            invalid += bad_values
            # good values mean both keys are there: the keys are exactly SHOT_FIELDS iff there are two
            schema_issues += bad_values or len(shot) != len(SHOT_FIELDS)
    return schema_issues, invalid


def _rounded(numerator: int, denominator: int) -> float:
    """``round(float(Fraction(numerator, denominator)), 4)``, 0.0 for a zero denominator:
    int / int is correctly rounded, so this is the same float without a Fraction."""
    return round(numerator / denominator, 4) if denominator else 0.0


def _pair_detail(i: int, j: int, quality: PairQuality, p: EventView, r: EventView) -> dict[str, Any]:
    denominator = quality.shot_denominator
    return {
        "prediction_index": i,
        "reference_index": j,
        "correct_summary_fields": list(quality.correct_fields),
        "predicted_shots": len(p.tokens),
        "reference_shots": len(r.tokens),
        "correct_shot_fields": quality.atoms,
        "summary_accuracy": round(quality.summary_correct / len(SUMMARY_FIELDS), 4),
        "shot_denominator": denominator,
        "shot_accuracy": _rounded(quality.atoms, denominator),
        "event_credit": _rounded(quality.credit_numerator, quality.credit_denominator),
    }


@dataclass
class _PairTotals:
    """Sums over the scorer's pairs."""

    summary_correct: int = 0
    present: int = 0
    predicted_shots: int = 0
    reference_shots: int = 0
    atoms: int = 0
    denominators: int = 0
    fully_correct: int = 0
    credit: int = 0  # in units of 1 / scale
    per_field: dict[str, Any] = dataclass_field(default_factory=lambda: dict.fromkeys(SUMMARY_FIELDS, 0))
    details: list[Any] = dataclass_field(default_factory=list)


def _pair_totals(
    predictions: list[Any],
    views: Sequence[EventView],
    references: Sequence[EventView],
    pairs: Sequence[tuple[int, int]],
    qualities: dict[tuple[int, int], PairQuality],
    exact: set[tuple[int, int]],
    scale: int,
) -> _PairTotals:
    totals = _PairTotals()
    for i, j in pairs:
        quality, p, r = qualities[(i, j)], views[i], references[j]
        totals.summary_correct += quality.summary_correct
        totals.present += len(_SUMMARY_FIELD_SET.intersection(predictions[i]))
        per_field = totals.per_field
        for name in quality.correct_fields:
            per_field[name] += 1
        totals.predicted_shots += quality.predicted_denominator
        totals.reference_shots += quality.reference_denominator
        totals.atoms += quality.atoms
        totals.credit += quality.credit_numerator * (scale // quality.credit_denominator)
        totals.denominators += quality.shot_denominator
        totals.fully_correct += (i, j) in exact
        totals.details.append(_pair_detail(i, j, quality, p, r))
    return totals


def score_events(predictions: list[Any], references: Sequence[EventView], version: str) -> dict[str, Any]:
    """All counts of the published details object (without reason / root flag).

    Long on purpose: the returned literal lists the published keys in their published
    order, so the layout can be checked against the golden files line by line."""
    check_caps(predictions)
    return _score_events(predictions, references, version)


def _score_events(predictions: list[Any], references: Sequence[EventView], version: str) -> dict[str, Any]:
    """:func:`score_events` for a submission whose caps were already checked."""
    views = [view(event) for event in predictions]
    best, scale, qualities = _align_scaled(views, references, version)
    pairs = best[5]
    n_predicted, n_reference = len(predictions), len(references)
    prediction_keys = [v.key for v in views]
    reference_keys = [r.key for r in references]
    # equal identities can only pair where the alignment computed a quality
    identity_ordered = ordered_pairs(qualities)
    # exact_event for the pairs of equal identities: every summary field and the tokens
    exact = {
        (i, j)
        for (i, j), quality in qualities.items()
        if len(quality.correct_fields) == len(SUMMARY_FIELDS)
        and same_exact_tokens(views[i].tokens, references[j].tokens, version)
    }
    exact_ordered = ordered_pairs(exact)
    identity_precision = _ratio(identity_ordered, n_predicted)
    identity_recall = _ratio(identity_ordered, n_reference)

    totals = _pair_totals(predictions, views, references, pairs, qualities, exact, scale)
    summary_correct, present, atoms = totals.summary_correct, totals.present, totals.atoms
    predicted_shots, reference_shots = totals.predicted_shots, totals.reference_shots
    pair_denominators, credit = totals.denominators, totals.credit  # credit: units of 1 / scale

    summary_total = len(SUMMARY_FIELDS) * len(pairs)
    shot_precision = _ratio(atoms, predicted_shots)
    shot_recall = _ratio(atoms, reference_shots)
    detail_correct = summary_correct + atoms
    detail_predicted = summary_total + predicted_shots
    detail_reference = summary_total + reference_shots
    detail_precision = _ratio(detail_correct, detail_predicted)
    detail_recall = _ratio(detail_correct, detail_reference)
    detail_denominator = summary_total + pair_denominators
    reward_denominator = n_predicted + n_reference
    identity = _identity_counts(prediction_keys, reference_keys)
    shot_schema_issues, invalid_shots = _shot_schema_counts(predictions, views)
    events = [event for event in predictions if isinstance(event, dict)]

    return {
        "reward": _rounded(2 * credit, scale * reward_denominator),
        "scorer_version": f"hierarchical-bottleneck-{version}",
        "n_ground_truth": n_reference,
        "n_predicted": n_predicted,
        "identity_matches_ordered": identity_ordered,
        "identity_matches_in_quality_alignment": len(pairs),
        "exact_event_matches_ordered": exact_ordered,
        "identity_matches_unordered": identity["unordered"],
        "invalid_identity_events": sum(key is None for key in prediction_keys),
        "false_identity_events": identity["false"],
        "duplicate_identity_events": identity["duplicates"],
        "out_of_order_identity_matches": max(0, identity["unordered"] - identity_ordered),
        "schema_issue_events": n_predicted - len(events) + sum(map(EVENT_FIELDS.__ne__, map(set, events))),
        "malformed_shot_sequences": sum(
            isinstance(event, dict) and "shots" in event and not isinstance(event["shots"], list)
            for event in predictions
        ),
        "shot_schema_issue_entries": shot_schema_issues,
        "invalid_shot_entries": invalid_shots,
        "identity_precision": round(identity_precision, 4),
        "identity_recall": round(identity_recall, 4),
        "identity_f1": round(f1(identity_precision, identity_recall), 4),
        "exact_event_precision": _rounded(exact_ordered, n_predicted),
        "exact_event_recall": _rounded(exact_ordered, n_reference),
        "exact_event_f1": _rounded(2 * exact_ordered, reward_denominator),
        "summary_fields_correct": summary_correct,
        "summary_fields_present": present,
        "summary_fields_predicted": summary_total,
        "summary_fields_total": summary_total,
        "summary_accuracy": round(_ratio(summary_correct, summary_total), 4),
        "summary_correct_by_field": {field: totals.per_field[field] for field in SUMMARY_FIELDS},
        "shot_fields_correct_ordered": atoms,
        "shot_fields_predicted_in_matched_events": predicted_shots,
        "shot_fields_reference_in_matched_events": reference_shots,
        "shot_precision": round(shot_precision, 4),
        "shot_recall": round(shot_recall, 4),
        "shot_f1": round(f1(shot_precision, shot_recall), 4),
        "shot_denominator": pair_denominators,
        "shot_accuracy": round(_ratio(atoms, pair_denominators), 4),
        "detail_fields_correct": detail_correct,
        "detail_fields_predicted": detail_predicted,
        "detail_fields_reference": detail_reference,
        "detail_precision": round(detail_precision, 4),
        "detail_recall": round(detail_recall, 4),
        "detail_f1": round(f1(detail_precision, detail_recall), 4),
        "detail_denominator": detail_denominator,
        "detail_accuracy": round(_ratio(detail_correct, detail_denominator), 4),
        "fully_correct_events": exact_ordered,
        "fully_correct_events_in_quality_alignment": totals.fully_correct,
        "hierarchical_true_positive_credit": _rounded(credit, scale),
        "hierarchical_precision": _rounded(credit, scale * n_predicted),
        "hierarchical_recall": _rounded(credit, scale * n_reference),
        "hierarchical_event_f1": _rounded(2 * credit, scale * reward_denominator),
        "reward_denominator": reward_denominator,
        "matched_pairs": totals.details,
        "formula": FORMULA,
        "exact_event_formula": EXACT_EVENT_FORMULA,
    }


# ------------------------------------------------------------------- ground truth


def ground_truth_events(ground_truth: object) -> list[Any]:
    """The reference events (``{"break_points": [...]}`` or a bare list)."""
    events = ground_truth.get("break_points") if isinstance(ground_truth, Mapping) else ground_truth
    if not isinstance(events, list):
        raise GroundTruthError("ground truth must be an object with a 'break_points' list")
    return events


def reference_views(ground_truth: object) -> list[EventView]:
    return [view(event) for event in ground_truth_events(ground_truth)]


def parse_submission(solution: bytes | BaseException) -> tuple[list[Any], bool, str | None]:
    """(events, root_schema_issue, error message or None); never raises."""
    root_schema_issue = False
    try:
        if isinstance(solution, BaseException):
            raise solution
        if not isinstance(solution, (bytes, bytearray, memoryview)):
            raise TypeError("solution must be bytes")
        document = decode_json_document(solution, DEPTH_LIMIT)
        if not isinstance(document, dict):
            root_schema_issue = True
            raise ValueError("solution root is not an object")
        root_schema_issue = set(document) != {"break_points"}
        if "break_points" not in document:
            raise ValueError("solution must contain the break_points key")
        events = document["break_points"]
        if not isinstance(events, list):
            raise ValueError("break_points is not a list")
        check_caps(events)
    except Exception as error:  # a malformed submission scores 0 with the reason
        return [], root_schema_issue, f"{error}"
    return events, root_schema_issue, None


def score(version: str, ground_truth: object, solution: bytes | BaseException) -> ScoreResult:
    """Score one submission; the bytes are those of the published ``judge.py``."""
    if version not in VERSIONS:
        raise ParameterError(f"unknown hierarchical-bottleneck version {version!r}")
    references = reference_views(ground_truth)
    events, root_schema_issue, error = parse_submission(solution)
    reason = "ok" if error is None else f"unreadable solution.json: {error}"
    counts = _score_events(events, references, version)  # parse_submission checked the caps
    reward = counts.pop("reward")
    details = {"reason": reason, "root_schema_issue": root_schema_issue, **counts}
    document = {"reward": reward, "details": details}
    return ScoreResult(
        reward=reward,
        reward_json=dumps_indented(document, newline=False),
        reward_txt=f"{reward}\n".encode(),
        details_json=None,
        details=details,
        reason=reason,
        scorer_id=f"hierarchical-bottleneck-{version}",
    )
