"""FrameLedger scoring library: pure standard-library scorers, alignment and anchors.

The public API (documented in docs/scoring.md):

* ``SCORERS`` / ``get_scorer`` / ``score_submission`` -> ``ScoreResult``
* ``align_actions`` / ``union_actions``, ``align_break_points`` / ``union_break_points``,
  ``union_moments``
* ``anchors`` -> ``list[Anchor]``, ``agreement`` -> ``dict``
"""

from .agreement import agreement, cohen_kappa
from .align import (
    BreakPointPair,
    Pair,
    align_actions,
    align_break_points,
    union_actions,
    union_break_points,
    union_moments,
)
from .anchors import anchors
from .errors import (
    CapExceeded,
    GroundTruthError,
    ParameterError,
    ScoringError,
    SolutionRejected,
    UnknownScorer,
)
from .registry import SCORERS, Parameter, Scorer, get_scorer, score_submission
from .results import Anchor, ScoreResult, UnionItem

__all__ = [
    "SCORERS",
    "Anchor",
    "BreakPointPair",
    "CapExceeded",
    "GroundTruthError",
    "Pair",
    "Parameter",
    "ParameterError",
    "ScoreResult",
    "Scorer",
    "ScoringError",
    "SolutionRejected",
    "UnionItem",
    "UnknownScorer",
    "agreement",
    "align_actions",
    "align_break_points",
    "anchors",
    "cohen_kappa",
    "get_scorer",
    "score_submission",
    "union_actions",
    "union_break_points",
    "union_moments",
]
