"""FrameLedger scoring library: pure standard-library scorers, alignment and anchors.

Alignment, agreement and anchors are imported on first use (module ``__getattr__``);
every name below stays importable with ``from scoring import ...``.

The public API (documented in docs/scoring.md):

* ``SCORERS`` / ``get_scorer`` / ``score_submission`` -> ``ScoreResult``
* ``align_actions`` / ``union_actions``, ``align_break_points`` / ``union_break_points``,
  ``union_moments``
* ``anchors`` -> ``list[Anchor]``, ``agreement`` -> ``dict``
"""

import sys
from types import ModuleType

from .errors import (
    CapExceeded,
    GroundTruthError,
    ParameterError,
    ScoringError,
    SolutionRejected,
    UnknownScorer,
)
from .registry import SCORERS, Parameter, Scorer, get_scorer, score_submission
from .results import ScoreResult

# Names whose modules load on first use, so that ``import scoring`` (and the command
# line) does not pay for agreement, statistics, alignment and anchors it may not need.
_LAZY = {
    "agreement": "agreement",
    "cohen_kappa": "agreement",
    "BreakPointPair": "align",
    "Pair": "align",
    "align_actions": "align",
    "align_break_points": "align",
    "union_actions": "align",
    "union_break_points": "align",
    "union_moments": "align",
    "anchors": "anchors",
    "Anchor": "results",
    "UnionItem": "results",
}


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'scoring' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(ModuleType):
    """``scoring.agreement`` and ``scoring.anchors`` name functions, as they always
    have, although modules of the same names exist. When such a submodule is first
    imported (by whatever path), the import system binds the module on the package;
    bind the function of the same name instead, so the public name never changes."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("agreement", "anchors") and isinstance(value, ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
