"""The scorer registry and the one entry point that scores a submission.

``score_submission`` is what the Django app, the batch jobs and the command line all
call; the command line writes ``ScoreResult.reward_json`` / ``reward_txt`` /
``details_json`` byte for byte.

Importing the registry is cheap: it names every scorer without importing any scorer
module; a scorer's module is imported the first time that scorer runs, so
``python -m scoring score`` loads only the scorer it runs.
"""

from collections.abc import Callable, Mapping
from types import MappingProxyType

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
    """A versioned scorer: ``kind`` is ``actions``, ``break_points`` or ``moments``."""

    scorer_id: str
    kind: str
    version: str
    description: str
    parameters: tuple[Parameter, ...]
    published: bool
    _score: Callable = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def check_params(self, params: Mapping) -> dict:
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

    def score(self, ground_truth: object, solution: bytes | BaseException, **params) -> ScoreResult:
        return self._score(ground_truth, solution, **self.check_params(params))

    @property
    def max_solution_bytes(self) -> int:
        """The byte cap of this scorer's file layer (``python -m scoring score``)."""
        from .files import SOLUTION_CAPS

        return SOLUTION_CAPS[self.kind]

    @property
    def over_cap_reason(self) -> str:
        """The file layer's reason for a file over :attr:`max_solution_bytes`, e.g.
        ``solution exceeds 2000000 bytes``: uploads record the same text."""
        from .files import over_cap_reason

        return over_cap_reason(self.kind)


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


def _egocentric(version: str) -> Callable:
    def run(ground_truth, solution, **params):
        from . import egocentric

        return egocentric.score(version, ground_truth, solution, **params)

    return run


def _tennis(version: str) -> Callable:
    def run(ground_truth, solution):
        from . import tennis

        return tennis.score(version, ground_truth, solution)

    return run


def _moments(ground_truth, solution, **params):
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
    ),
    Scorer(
        "egocentric-f1-v1",
        "actions",
        "v1",
        "action-ledger F1, longest order-preserving matching (historical regrades)",
        _EGOCENTRIC_PARAMETERS,
        True,
        _egocentric("v1"),
    ),
    Scorer(
        "hierarchical-bottleneck-v1",
        "break_points",
        "v1",
        "break-point ledger, min(summary, ordered shots) credit (current published verifier)",
        (),
        True,
        _tennis("v1"),
    ),
    Scorer(
        "hierarchical-bottleneck-v2",
        "break_points",
        "v2",
        "break-point ledger, shot token 0 scored on its direction only (reviewer fix)",
        (),
        False,
        _tennis("v2"),
    ),
    Scorer(
        "moment-utility-v1",
        "moments",
        "v1",
        "moment search, IoU utility normalised by the grid optimum, per-source mean",
        _MOMENT_PARAMETERS,
        False,
        _moments,
    ),
)

SCORERS: Mapping[str, Scorer] = MappingProxyType({scorer.scorer_id: scorer for scorer in _ALL})


def get_scorer(scorer_id: str) -> Scorer:
    """The registered scorer; raises :class:`UnknownScorer` (a ValueError)."""
    try:
        return SCORERS[scorer_id]
    except (KeyError, TypeError):
        known = ", ".join(SCORERS)
        raise UnknownScorer(f"unknown scorer {scorer_id!r} (known: {known})") from None


def score_submission(
    scorer_id: str, ground_truth: object, solution_bytes: bytes | BaseException, **params
) -> ScoreResult:
    """Score raw submission bytes against a parsed ground truth.

    ``solution_bytes`` may instead be the exception the file layer raised while
    reading the submission (``OSError``, :class:`scoring.SolutionRejected`); it scores
    0 with the scorer's reason prefix, as the published verifiers do. A malformed
    submission never raises; a bad ground truth or parameter raises a ValueError
    subclass (:class:`GroundTruthError`, :class:`ParameterError`).
    """
    return get_scorer(scorer_id).score(ground_truth, solution_bytes, **params)
