"""The scorer registry and the one entry point that scores a submission.

``score_submission`` is what the Django app, the batch jobs and the command line all
call; the command line writes ``ScoreResult.reward_json`` / ``reward_txt`` /
``details_json`` byte for byte.

Importing the registry is cheap: it names every scorer without importing any scorer
module; a scorer's module is imported the first time that scorer runs, so
``python -m scoring score`` loads only the scorer it runs.
"""

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from ._annotations import Any
from ._records import dataclass, field
from .constants import (
    EGOCENTRIC_DEFAULT_TOLERANCE,
    EGOCENTRIC_PUBLISHED_FRAME_COUNT,
    MOMENTS_DEFAULT_A,
    MOMENTS_DEFAULT_B,
)
from .errors import ParameterError, UnknownScorer
from .results import ScoreResult

REQUIRED = object()  # marks a parameter without a default


@dataclass(frozen=True)
class Parameter:
    """One task parameter of a scorer."""

    name: str
    default: object
    description: str

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Scorer:
    """A versioned scorer: ``kind`` (its family) is ``actions``, ``break_points`` or
    ``moments`` for the built-in scorers, or a family registered with
    :func:`register_scorer`.

    Facts the application needs about a scorer live here too: ``max_solution_bytes``
    and ``over_cap_reason`` (the file layer's cap and the reason a file over it scores 0
    with; for a family registered from outside, its ``solution_cap`` and
    ``solution_cap_reason``, None: no cap of its own), and ``key_metrics`` (the ``details`` keys a
    leaderboard shows as columns). A family registered from outside the library also
    brings ``anchors_fn``, ``agreement_fn`` and ``diagnose_fn`` (the built-in
    families have theirs in ``anchors``, ``agreement`` and ``diagnostics``).
    """

    scorer_id: str
    kind: str
    version: str
    description: str
    parameters: tuple[Parameter, ...]
    published: bool
    _score: Callable[..., ScoreResult] = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    solution_cap: int | None = None
    solution_cap_reason: str = ""
    key_metrics: tuple[str, ...] = ()
    anchors_fn: Callable[..., list[Any]] | None = field(default=None, repr=False, compare=False)
    agreement_fn: Callable[..., dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    diagnose_fn: Callable[..., dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def family(self) -> str:
        return self.kind

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters with defaults filled in; unknown or missing ones raise."""
        known = {parameter.name: parameter for parameter in self.parameters}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ParameterError(f"{self.scorer_id} has no parameter {unknown[0]!r}")
        values = {}
        for name, parameter in known.items():
            value = params.get(name, parameter.default)
            if value is REQUIRED:
                value = None  # the scorer explains what is missing
            values[name] = value
        return values

    def score(self, ground_truth: object, solution: bytes | BaseException, **params: Any) -> ScoreResult:
        return self._score(ground_truth, solution, **self.check_params(params))

    @property
    def max_solution_bytes(self) -> int | None:
        """The byte cap of this scorer's file layer (``python -m scoring score``)."""
        from .files import SOLUTION_CAPS

        return SOLUTION_CAPS.get(self.kind, self.solution_cap)

    @property
    def over_cap_reason(self) -> str:
        """The file layer's reason for a file over :attr:`max_solution_bytes`, e.g.
        ``solution exceeds 2000000 bytes``: uploads record the same text."""
        from .files import SOLUTION_CAPS, over_cap_reason

        return over_cap_reason(self.kind) if self.kind in SOLUTION_CAPS else self.solution_cap_reason

    def diagnose(
        self,
        ground_truth: dict[str, Any],
        solution: bytes | BaseException,
        params: Mapping[str, Any],
        details: Mapping[str, Any],
        *,
        reference_frames: Sequence[tuple[int, int] | None] = (),
        frame_rate: tuple[int, int] = (24, 1),
    ) -> dict[str, Any]:
        """Timeline diagnostics of one scored submission (``details``: the scorer's
        details), computed with the scorer's own rules: its ``diagnose_fn``, or for the
        built-in families ``scoring.diagnostics``."""
        params, details = dict(params), dict(details)
        base = {"scorer_id": self.scorer_id, "family": self.kind, "reason": details.get("reason", "")}
        if self.diagnose_fn is not None:
            body = self.diagnose_fn(
                ground_truth, solution, params, details, reference_frames=reference_frames, frame_rate=frame_rate
            )
        else:
            from .diagnostics import diagnostics  # loaded on first use: the registry stays cheap to import

            body = diagnostics(
                self.kind,
                self.version,
                ground_truth,
                solution,
                params,
                details,
                reference_frames=reference_frames,
                frame_rate=frame_rate,
            )
        return {**base, **body}


_EGOCENTRIC_PARAMETERS = (
    Parameter(
        "frame_count",
        REQUIRED,
        "video frame count N; frames must satisfy 0 <= start < end < N "
        f"(published video: {EGOCENTRIC_PUBLISHED_FRAME_COUNT}; a 'frame_count' key in "
        "the ground truth is used when not given)",
    ),
    Parameter(
        "tolerance",
        EGOCENTRIC_DEFAULT_TOLERANCE,
        "boundary tolerance T in frames, |delta| <= T (published: 12)",
    ),
    Parameter(
        "vocabulary",
        None,
        "{'verbs': [...], 'nouns': [...]}; default: the verbs and nouns of the ground "
        "truth, as the published verifier derives them",
    ),
)
_MOMENT_PARAMETERS = (
    Parameter(
        "corpus",
        REQUIRED,
        "records.jsonl rows {'video_id', 'duration', 'grid': [...] | {'step': s}} (or a ground-truth 'videos' list)",
    ),
    Parameter("a", MOMENTS_DEFAULT_A, "reward-map score anchor on the 0-100 scale (15)"),
    Parameter("b", MOMENTS_DEFAULT_B, "reward-map reference quality (0.14696558206208937)"),
)


_EGOCENTRIC_FACTS: dict[str, Any] = {
    "key_metrics": (
        "precision", "recall", "true_positives", "false_positives", "false_negatives", "predicted_actions",
        "invalid_predicted_actions", "verb_and_boundary_matches", "boundary_only_matches",
    ),
}  # fmt: skip
_TENNIS_FACTS: dict[str, Any] = {
    "key_metrics": (
        "n_predicted", "identity_matches_in_quality_alignment", "false_identity_events", "duplicate_identity_events",
        "exact_event_matches_ordered", "summary_accuracy", "shot_accuracy", "hierarchical_precision",
        "hierarchical_recall",
    ),
}  # fmt: skip
_MOMENT_FACTS: dict[str, Any] = {
    "key_metrics": ("raw_quality", "r1_at_0.5", "r1_at_0.7", "r1_at_0.9", "mean_iou", "missing", "invalid"),
}


def _egocentric(version: str) -> Callable[..., ScoreResult]:
    def run(ground_truth: object, solution: bytes | BaseException, **params: Any) -> ScoreResult:
        from . import egocentric

        return egocentric.score(version, ground_truth, solution, **params)

    return run


def _tennis(version: str) -> Callable[..., ScoreResult]:
    def run(ground_truth: object, solution: bytes | BaseException) -> ScoreResult:
        from . import tennis

        return tennis.score(version, ground_truth, solution)

    return run


def _moments(ground_truth: object, solution: bytes | BaseException, **params: Any) -> ScoreResult:
    from . import moments

    return moments.score(ground_truth, solution, **params)


_ALL = (
    Scorer(
        "egocentric-f1-v2",
        "actions",
        "v2",
        "action-ledger F1, maximum one-to-one matching (current published verifier)",
        _EGOCENTRIC_PARAMETERS,
        True,
        _egocentric("v2"),
        **_EGOCENTRIC_FACTS,
    ),
    Scorer(
        "egocentric-f1-v1",
        "actions",
        "v1",
        "action-ledger F1, longest order-preserving matching (historical regrades)",
        _EGOCENTRIC_PARAMETERS,
        True,
        _egocentric("v1"),
        **_EGOCENTRIC_FACTS,
    ),
    Scorer(
        "hierarchical-bottleneck-v1",
        "break_points",
        "v1",
        "break-point ledger, min(summary, ordered shots) credit (current published verifier)",
        (),
        True,
        _tennis("v1"),
        **_TENNIS_FACTS,
    ),
    Scorer(
        "hierarchical-bottleneck-v2",
        "break_points",
        "v2",
        "break-point ledger, shot token 0 scored on its direction only (reviewer fix)",
        (),
        False,
        _tennis("v2"),
        **_TENNIS_FACTS,
    ),
    Scorer(
        "moment-utility-v1",
        "moments",
        "v1",
        "moment search, IoU utility normalised by the grid optimum, per-source mean",
        _MOMENT_PARAMETERS,
        False,
        _moments,
        **_MOMENT_FACTS,
    ),
)

_REGISTERED: dict[str, Scorer] = {scorer.scorer_id: scorer for scorer in _ALL}
SCORERS: Mapping[str, Scorer] = MappingProxyType(_REGISTERED)
BUILTIN_FAMILIES = ("actions", "break_points", "moments")


def register_scorer(scorer: Scorer) -> Scorer:
    """Add a scorer (of a built-in or a new family) to ``SCORERS``. A new family must
    bring ``anchors_fn``, ``agreement_fn`` and ``diagnose_fn``; an id is registered once."""
    if scorer.scorer_id in _REGISTERED:
        raise ParameterError(f"a scorer {scorer.scorer_id!r} is registered already")
    if scorer.kind not in BUILTIN_FAMILIES and None in (scorer.anchors_fn, scorer.agreement_fn, scorer.diagnose_fn):
        raise ParameterError(f"{scorer.scorer_id}: a new family needs anchors_fn, agreement_fn and diagnose_fn")
    _REGISTERED[scorer.scorer_id] = scorer
    return scorer


def unregister_scorer(scorer_id: str) -> None:
    """Remove a scorer added with :func:`register_scorer` (built-in scorers stay)."""
    if scorer_id in {scorer.scorer_id for scorer in _ALL}:
        raise ParameterError(f"{scorer_id} is a built-in scorer")
    _REGISTERED.pop(scorer_id, None)


def scorers_of(family: str) -> list[Scorer]:
    """The registered scorers of one family, in registration order."""
    return [scorer for scorer in SCORERS.values() if scorer.kind == family]


def get_scorer(scorer_id: str) -> Scorer:
    """The registered scorer; raises :class:`UnknownScorer` (a ValueError)."""
    try:
        return SCORERS[scorer_id]
    except (KeyError, TypeError):
        known = ", ".join(SCORERS)
        raise UnknownScorer(f"unknown scorer {scorer_id!r} (known: {known})") from None


def score_submission(
    scorer_id: str, ground_truth: object, solution_bytes: bytes | BaseException, **params: Any
) -> ScoreResult:
    """Score raw submission bytes against a parsed ground truth.

    ``solution_bytes`` may instead be the exception the file layer raised while
    reading the submission (``OSError``, :class:`scoring.SolutionRejected`); it scores
    0 with the scorer's reason prefix, as the published verifiers do. A malformed
    submission never raises; a bad ground truth or parameter raises a ValueError
    subclass (:class:`GroundTruthError`, :class:`ParameterError`).
    """
    return get_scorer(scorer_id).score(ground_truth, solution_bytes, **params)
