"""``Anchor`` and ``UnionItem`` (public as ``scoring.results.Anchor`` / ``UnionItem``):
real dataclasses, kept out of the scoring hot path because ``dataclasses`` is slow to
import."""

from __future__ import annotations

from dataclasses import dataclass

from ._annotations import Any


@dataclass(frozen=True)
class Anchor:
    """One row of a calibration table."""

    name: str
    reward: float
    description: str


@dataclass(frozen=True)
class UnionItem:
    """One item of the union of two ledgers.

    ``status`` is ``agreed`` (identical events), ``conflicting`` (paired but
    different; ``differing_fields`` names the fields), ``a_only`` or ``b_only``.
    ``a_index`` / ``b_index`` index the two input lists (``None`` on the missing side).
    ``tier`` says which pairing rule paired the two events (``None`` when unpaired).
    ``start_delta`` / ``end_delta`` are B minus A, in frames (action ledgers) or
    seconds (moment ledgers, first interval), ``None`` where not applicable.
    """

    status: str
    a_index: int | None
    b_index: int | None
    tier: str | None = None
    differing_fields: tuple[str, ...] = ()
    start_delta: int | float | None = None
    end_delta: int | float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "a_index": self.a_index,
            "b_index": self.b_index,
            "tier": self.tier,
            "differing_fields": list(self.differing_fields),
            "start_delta": self.start_delta,
            "end_delta": self.end_delta,
        }
