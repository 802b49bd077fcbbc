"""A small stand-in for ``dataclasses.dataclass`` on the scoring hot path.

``import dataclasses`` pulls in ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``,
``enum``, ``re``), which alone costs more than a bare interpreter start; the command
line must cost at most twice that. The record classes the scorers build on every call
(``ScoreResult``, ``Scorer``, ``Parameter``, the scorers' internal records) use this
decorator instead. It supports what those classes use, with the same meaning:

* fields are the class annotations, in order; a class attribute is the default;
* ``field(default=..., default_factory=..., repr=..., compare=...)``;
* ``frozen=True``: assigning or deleting an attribute raises
  ``dataclasses.FrozenInstanceError`` (imported only then);
* ``__init__``, ``__repr__``, ``__eq__`` (same class, compared fields) and, for frozen
  classes, ``__hash__`` over the compared fields.

Records shared with callers that inspect them with ``dataclasses`` (``UnionItem``,
``Anchor``, ``Pair``) stay real dataclasses.

What it saves, measured side by side (this module against one line,
``from dataclasses import dataclass, field``; whole processes run in turn, 60 runs each,
load average 2.7-3.5 on 2 cores; CPU time, median, and wall time, min):

=============================================  ==============  ==============
call                                           records         dataclasses
=============================================  ==============  ==============
``score`` egocentric-f1-v2, published oracle   49 ms / 38 ms   66 ms / 50 ms
``score`` hierarchical-bottleneck-v1, oracle   44 ms / 35 ms   55 ms / 46 ms
``--help``                                     48 ms / 37 ms   60 ms / 46 ms
=============================================  ==============  ==============

About 11-17 ms of CPU a call, 1.24-1.34 times the cost (the paired ratio); a second
series of 100 runs at load average 14-41 gave the same ratios. Under 10 ms or 10 %
it would go.
"""

from ._annotations import TYPE_CHECKING, Any

_MISSING = object()


class Field:
    __slots__ = ("name", "default", "default_factory", "repr", "compare")

    def __init__(
        self,
        default: object = _MISSING,
        default_factory: Any = _MISSING,
        repr: bool = True,  # noqa: A002
        compare: bool = True,
    ) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare


def _field(
    *,
    default: object = _MISSING,
    default_factory: Any = _MISSING,
    repr: bool = True,  # noqa: A002
    compare: bool = True,
) -> Any:
    return Field(default, default_factory, repr, compare)


def _frozen_error(self: object, name: str, *args: object) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _fields(cls: type) -> list[Field]:
    fields = []
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        spec.name = name
        if isinstance(value, Field):
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        fields.append(spec)
    return fields


def _init(cls: type, fields: list[Field], frozen: bool) -> Any:
    namespace: dict[str, Any] = {"_MISSING": _MISSING}
    arguments: list[str] = []
    lines: list[str] = []
    for index, spec in enumerate(fields):
        if spec.default is not _MISSING:
            namespace[f"_default{index}"] = spec.default
            arguments.append(f"{spec.name}=_default{index}")
            value = spec.name
        elif spec.default_factory is not _MISSING:
            namespace[f"_factory{index}"] = spec.default_factory
            arguments.append(f"{spec.name}=_MISSING")
            value = f"_factory{index}() if {spec.name} is _MISSING else {spec.name}"
        else:
            arguments.append(spec.name)
            value = spec.name
        # frozen: straight into the instance dict (its __setattr__ refuses)
        lines.append(f"_state[{spec.name!r}] = {value}" if frozen else f"self.{spec.name} = {value}")
    if frozen and lines:
        lines.insert(0, "_state = self.__dict__")
    source = f"def __init__(self, {', '.join(arguments)}):\n    " + ("\n    ".join(lines) or "pass")
    exec(source, namespace)  # the same technique dataclasses uses
    function = namespace["__init__"]
    function.__qualname__ = f"{cls.__qualname__}.__init__"
    return function


def _dataclass(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """``@dataclass`` / ``@dataclass(frozen=True)`` for the cases described above."""

    def wrap(cls: Any) -> Any:
        fields = _fields(cls)
        shown = [spec.name for spec in fields if spec.repr]
        compared = tuple(spec.name for spec in fields if spec.compare)

        def __repr__(self: object) -> str:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
            return f"{type(self).__qualname__}({inner})"

        def __eq__(self: object, other: object) -> bool:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, name) == getattr(other, name) for name in compared)

        cls.__init__ = _init(cls, fields, frozen)
        cls.__repr__ = __repr__
        cls.__eq__ = __eq__
        cls.__record_fields__ = tuple(spec.name for spec in fields)
        if frozen:
            cls.__setattr__ = _frozen_error
            cls.__delattr__ = _frozen_error
            cls.__hash__ = lambda self: hash(tuple(getattr(self, name) for name in compared))
        else:
            cls.__hash__ = None
        return cls

    return wrap if cls is None else wrap(cls)


# Type checkers read the records as the standard dataclasses they behave like.
if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
else:
    dataclass, field = _dataclass, _field
