"""Plain result types shared by every scorer.

``ScoreResult`` is built on every call and uses the light record decorator of
:mod:`scoring._records`; ``Anchor`` and ``UnionItem`` are real dataclasses (callers
inspect them with ``dataclasses``) and load on first use.
"""

from __future__ import annotations

from ._records import dataclass, field


@dataclass(frozen=True)
class ScoreResult:
    """The outcome of scoring one submission.

    ``reward_json``, ``reward_txt`` and ``details_json`` are the exact bytes the command
    line writes (``None`` where the scorer has no such file). ``details`` is the parsed
    content of the details document (for the tennis scorers: the ``details`` object of
    ``reward.json``).
    """

    reward: float
    reward_json: bytes
    reward_txt: bytes | None
    details_json: bytes | None
    details: dict = field(repr=False)
    reason: str
    scorer_id: str = ""


def __getattr__(name: str) -> object:
    if name in ("Anchor", "UnionItem"):
        from . import _result_dataclasses

        return getattr(_result_dataclasses, name)
    raise AttributeError(f"module 'scoring.results' has no attribute {name!r}")
