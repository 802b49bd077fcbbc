"""Plain result types shared by every scorer.

``ScoreResult`` is built on every call and uses the light record decorator of
:mod:`scoring._records`; ``Anchor`` and ``UnionItem`` are real dataclasses (callers
inspect them with ``dataclasses``) and load on first use.
"""

from collections.abc import Callable

from ._annotations import TYPE_CHECKING, Any
from ._records import dataclass, field

if TYPE_CHECKING:
    from typing import ClassVar


@dataclass(frozen=True)
class ScoreResult:
    """The outcome of scoring one submission.

    ``reward_json``, ``reward_txt`` and ``details_json`` are the exact bytes the command
    line writes (``None`` where the scorer has no such file). ``details`` is the parsed
    content of the details document (for the tennis scorers: the ``details`` object of
    ``reward.json``); treat it as read-only: a result whose ``details_json`` is encoded
    on first read (:func:`with_details_encoded_on_read`) encodes ``details`` as it is then.
    """

    reward: float
    reward_json: bytes
    reward_txt: bytes | None
    details_json: bytes | None
    details: dict[str, Any] = field(repr=False)
    reason: str
    scorer_id: str = ""
    if TYPE_CHECKING:
        __record_fields__: ClassVar[tuple[str, ...]]  # the field names, set by the record decorator

    def __getattr__(self, name: str) -> object:
        # Only called for an attribute the instance does not hold: ``details_json`` of
        # a result from :func:`with_details_encoded_on_read`, encoded once, then kept.
        encode = self.__dict__.get("_encode_details") if name == "details_json" else None
        if encode is None:
            raise AttributeError(f"'ScoreResult' object has no attribute {name!r}")
        value = encode()
        self.__dict__["details_json"] = value
        return value

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__record_fields__}


def with_details_encoded_on_read(encode_details: Callable[[], bytes], **fields: Any) -> ScoreResult:
    """A :class:`ScoreResult` whose ``details_json`` is ``encode_details()``, called when
    it is first read (the command line writes that file only when asked for it)."""
    result = ScoreResult(details_json=None, **fields)
    state = result.__dict__
    del state["details_json"]
    state["_encode_details"] = encode_details
    return result


def __getattr__(name: str) -> object:
    if name in ("Anchor", "UnionItem"):
        from . import _result_dataclasses

        return getattr(_result_dataclasses, name)
    raise AttributeError(f"module 'scoring.results' has no attribute {name!r}")
