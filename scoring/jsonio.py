"""Reading and writing JSON exactly as the published verifiers do.

The verifiers open the solution in text mode (UTF-8, universal newlines) and parse it
with Python's recursive decoder, called a fixed number of frames deep. Two things
follow that a plain ``json.loads(data)`` does not reproduce:

* line endings: CR and CRLF become LF before parsing, so a syntax error's
  line / column / char are those of the translated text (:func:`text_mode`);
* nesting depth: the decoder enters one interpreter recursion level per open array
  or object, so a verifier rejects a document nested deeper than a fixed limit with
  ``maximum recursion depth exceeded while decoding a JSON array|object from a
  unicode string`` (992 levels for the egocentric judge, 994 for the tennis judge,
  measured under CPython 3.11).

:func:`loads_like_verifier` decides the depth question with an explicit pre-scan
(which container would be entered first beyond the limit, and whether a syntax error
comes before it), then parses with enough interpreter headroom that the outcome never
depends on the caller's stack depth, thread or recursion limit.

Only the standard library is used, and nothing heavier than ``_json`` is imported
until an error message has to be built.
"""

import sys
from _thread import allocate_lock
from itertools import accumulate

from ._annotations import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from types import FrameType

DEFAULT_DEPTH_LIMIT = 992  # the egocentric judge's limit; scorers pass their own
DIRECT_PARSE_DEPTH = 1000  # up to this depth a parse is first tried on the caller's stack
_PARSE_STACK_BYTES = 32 * 1024 * 1024
_FRAME_HEADROOM = 100
_WHITESPACE = " \t\n\r"
_limit_lock = allocate_lock()


def _json_module() -> Any:
    import json

    return json


# ------------------------------------------------------------------------ decoder


class _DecoderContext:
    """The settings of ``json``'s default decoder, for ``_json.make_scanner``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scanner: Any = None


def _skip_whitespace(text: str, index: int) -> int:
    if index == len(text) or text[index] not in _WHITESPACE:  # the usual case: nothing to skip
        return index
    rest = text[index:] if index else text
    return len(text) - len(rest.lstrip(_WHITESPACE))


def loads(text: str) -> Any:
    """Exactly ``json.loads(text)`` for a ``str`` (same C scanner, same settings,
    same errors), without importing ``json`` and ``re`` unless an error is raised."""
    global _scanner
    if _scanner is None:
        from _json import make_scanner

        context: Any = _DecoderContext()  # what make_scanner reads of a JSONDecoder
        _scanner = make_scanner(context)
    if text.startswith("\ufeff"):
        raise _json_module().JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value, end = _scanner(text, _skip_whitespace(text, 0))
    except StopIteration as stop:
        raise _json_module().JSONDecodeError("Expecting value", text, stop.value) from None
    end = _skip_whitespace(text, end)
    if end != len(text):
        raise _json_module().JSONDecodeError("Extra data", text, end)
    return value


# ----------------------------------------------------------------------- reading


def text_mode(data: bytes) -> str:
    """The string a verifier's ``open(path, encoding="utf-8")`` reads from ``data``.

    Strict UTF-8 (a ``UnicodeDecodeError`` names the byte position, as the text
    layer does), a leading BOM kept (``json`` then rejects it, as in the verifier),
    and universal newlines: CRLF and lone CR become LF.
    """
    text = bytes(data).decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# ------------------------------------------------------------------ depth scanner

_patterns: dict[str, "re.Pattern[str]"] = {}  # compiled lazily: ``re`` costs a few ms at start-up


def _pattern(name: str) -> "re.Pattern[str]":
    if not _patterns:
        import re

        # A string token as the decoder delimits it; an unterminated one runs to the end.
        string = r'"[^"\\]*(?:\\.[^"\\]*)*"?'
        _patterns["string"] = re.compile(string, re.DOTALL)
        _patterns["not_bracket"] = re.compile(r"[^\[\]{}]+")
        _patterns["token"] = re.compile(string + r"|[\[\]{}]", re.DOTALL)
    return _patterns[name]


_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


def count_openers(text: str) -> int:
    """How many ``[`` and ``{`` the text holds (inside strings too): a cheap upper
    bound of its nesting depth."""
    return text.count("[") + text.count("{")


def nesting_depth(text: str) -> int:
    """The deepest run of open arrays / objects outside strings (lexical)."""
    if count_openers(text) == 0:
        return 0
    brackets = _pattern("not_bracket").sub("", _pattern("string").sub("", text))
    return max(0, max(accumulate(map(_DELTA.__getitem__, brackets)), default=0))


def first_container_beyond(text: str, limit: int) -> int:
    """Index of the first ``[`` / ``{`` (outside strings) opened at depth ``limit + 1``,
    or -1 when the text never nests that deep.

    Up to the point where the decoder stops, its nesting equals this lexical count
    (it only moves past a closing bracket that matches), so a decoder that gets as
    far as this index enters exactly this container one level past the limit.
    """
    if count_openers(text) <= limit:
        return -1
    depth = 0
    for token in _pattern("token").finditer(text):
        char = text[token.start()]
        if char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return token.start()
        elif char == "]" or char == "}":
            depth -= 1
    return -1


# ------------------------------------------------------------------------ parsing


def _parse_with_headroom(text: str, depth: int) -> object:
    """``json.loads(text)`` for a text nested at most ``depth`` deep, independent of
    the caller's stack: it is tried in place (interpreters at their default recursion
    limit stop a too-deep parse with a RecursionError long before the C stack is at
    risk) and, when the caller's own stack leaves too little room, repeated on a fresh
    thread with a known stack and enough recursion headroom."""
    if depth <= DIRECT_PARSE_DEPTH:
        try:
            return loads(text)
        except (RecursionError, SystemError):
            # The caller's own stack left too little room. (The C decoder imports
            # json.decoder to build an error; when that import itself runs out of room
            # it reports a SystemError instead.) Either way: again, with room.
            pass
    return _parse_on_fresh_stack(text, depth)


def _parse_on_fresh_stack(text: str, depth: int) -> object:
    """Parse on a new thread with a known stack size and, for the duration, a
    recursion limit with room for ``depth`` levels (only ever raised)."""
    needed = depth + _FRAME_HEADROOM
    return _run_on_fresh_thread(text, needed if sys.getrecursionlimit() < needed else None)


NEAR_LIMIT = 16  # a text nesting this close to the limit is parsed with the exact budget


def _run_on_fresh_thread(text: str, recursion_limit: int | None) -> object:
    """``json.loads(text)`` on a new thread with a 32 MiB stack; with
    ``recursion_limit``, the interpreter's recursion limit is that value while the
    thread parses (set from inside the thread, put back before it ends), so the
    decoder has exactly the room that limit leaves at this call path."""
    import threading

    json = _json_module()  # the decoder builds its errors from json.decoder: import it here
    outcome: dict[str, Any] = {}

    def target() -> None:
        previous = sys.getrecursionlimit()
        if recursion_limit is not None:
            sys.setrecursionlimit(recursion_limit)
        try:
            outcome["value"] = json.loads(text)
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error
        finally:
            if recursion_limit is not None:
                sys.setrecursionlimit(previous)

    with _limit_lock:
        previous_stack = threading.stack_size(_PARSE_STACK_BYTES)
        try:
            worker = threading.Thread(target=target, name="scoring-json-parse", daemon=True)
            worker.start()
        finally:
            threading.stack_size(previous_stack)
        worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


_base_levels: dict[int, int] = {}
_MAX_CALIBRATION_LIMIT = 5000


def _thread_base_levels() -> int | None:
    """The recursion levels in use when :func:`_run_on_fresh_thread` starts decoding
    (under a recursion limit R, exactly R - base nested arrays parse), measured once
    per interpreter limit by a binary search that leaves the limit as it is; None when
    the limit is too high to measure cheaply."""
    limit = sys.getrecursionlimit()
    if limit > _MAX_CALIBRATION_LIMIT:
        return None
    if limit not in _base_levels:
        low, high = 0, limit  # low parses, high does not
        while high - low > 1:
            middle = (low + high) // 2
            try:
                _run_on_fresh_thread("[" * middle + "]" * middle, None)
                low = middle
            except RecursionError:
                high = middle
        _base_levels[limit] = limit - low
    return _base_levels[limit]


def _caller_depth() -> int:
    """Python frames on the calling thread (a lower bound of its recursion depth)."""
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _decide_with_probe(text: str, depth: int, depth_limit: int) -> object:
    """The limit decided lexically (used when the exact budget cannot be set up
    safely): the first container opened beyond the limit, and whether the decoder
    meets a syntax error before it (the prefix is parsed with that container closed
    at once: an error at or before its position happens first in the verifier too)."""
    beyond = first_container_beyond(text, depth_limit)
    if beyond < 0:
        return _parse_with_headroom(text, depth)
    opener = text[beyond]
    json = _json_module()
    probe = text[: beyond + 1] + ("]" if opener == "[" else "}")
    try:
        _parse_with_headroom(probe, depth_limit + 1)
    except json.JSONDecodeError as error:
        if error.pos <= beyond:
            raise
    kind = "array" if opener == "[" else "object"
    raise RecursionError(f"maximum recursion depth exceeded while decoding a JSON {kind} from a unicode string")


def loads_like_verifier(text: str, depth_limit: int = DEFAULT_DEPTH_LIMIT) -> Any:
    """``json.loads(text)`` as a verifier whose decoder fits ``depth_limit`` levels.

    A text that cannot nest within :data:`NEAR_LIMIT` levels of the limit (checked with
    a count of its brackets, then a lexical scan) parses exactly as ``json.loads``. A
    text that reaches that close is decoded by the same C decoder with exactly the
    verifier's room -- on a fresh thread under a recursion limit calibrated so that
    ``depth_limit`` levels fit -- so everything the limit decides comes out as in the
    verifier: the ``RecursionError`` message of the container it could not enter, a
    syntax error met before it, and the ``... while calling a Python object`` the
    decoder reports when building an error that close to the limit.
    """
    openers = count_openers(text)
    if openers <= depth_limit - NEAR_LIMIT:  # cannot nest that deep: no scan needed
        return _parse_with_headroom(text, openers)
    depth = nesting_depth(text)
    if depth <= depth_limit - NEAR_LIMIT:
        return _parse_with_headroom(text, depth)
    base = _thread_base_levels()
    if base is not None:
        budget = base + depth_limit
        # Setting the limit to the budget for the parse must not strand any thread
        # deeper than it: at most a few levels below the current limit, and the
        # caller itself far from it.
        if sys.getrecursionlimit() - budget <= NEAR_LIMIT and _caller_depth() < budget - 100:
            return _run_on_fresh_thread(text, budget)
    return _decide_with_probe(text, depth, depth_limit)


def decode_json_document(data: bytes, depth_limit: int = DEFAULT_DEPTH_LIMIT) -> Any:
    """Bytes of a UTF-8 text file -> one JSON document, as a verifier reads it.

    Raises what the verifier's ``json.load`` raises (``UnicodeDecodeError``,
    ``json.JSONDecodeError``, ``RecursionError`` for a document nested beyond
    ``depth_limit``); callers turn those into reasons.
    """
    return loads_like_verifier(text_mode(data), depth_limit)


# ------------------------------------------------------------------------ writing


def dumps_indented(document: object, *, newline: bool) -> bytes:
    """``json.dumps(document, indent=2)`` (ASCII), optionally with a final newline."""
    text = dumps_indent2(document)
    if newline:
        text += "\n"
    return text.encode("ascii")


def _float_text(value: float) -> str:
    text = float.__repr__(value)
    if text[-1] in "0123456789":  # finite: what json writes too
        return text
    return _NON_FINITE[text]


_NON_FINITE = {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}
_scalar_encoders: "dict[type, Callable[[Any], str]]" = {}


def _scalars() -> "dict[type, Callable[[Any], str]]":
    """Text of a scalar by its exact type (``bool`` before ``int`` by construction)."""
    if not _scalar_encoders:
        from _json import encode_basestring_ascii

        _scalar_encoders.update(
            {
                str: encode_basestring_ascii,
                int: int.__repr__,
                float: _float_text,
                bool: lambda value: "true" if value else "false",
                type(None): lambda value: "null",
            }
        )
    return _scalar_encoders


def dumps_indent2(document: object) -> str:
    """Byte-for-byte ``json.dumps(document, indent=2)`` for dicts with string keys,
    lists, tuples, strings, ints, floats, booleans and None (what the scorers write),
    several times faster than the pure-Python indenting encoder ``json`` uses with an
    indent (scalars are written inline, one dispatch on their exact type)."""
    scalars = _scalars()
    quote = scalars[str]
    quoted_keys: dict[str, str] = {}
    parts: list[str] = []
    append = parts.append

    def scalar(value: object) -> str:
        kinds: tuple[tuple[type, Callable[[Any], str]], ...] = (
            (bool, scalars[bool]), (int, int.__repr__), (float, _float_text), (str, quote)
        )  # fmt: skip
        for kind, encode_kind in kinds:
            if isinstance(value, kind):  # subclasses of the JSON scalar types
                return encode_kind(value)
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    def encode(value: object, indent: str) -> None:
        if isinstance(value, dict):
            if not value:
                append("{}")
                return
            inner = indent + "  "
            separator = "{\n" + inner
            for key, item in value.items():
                quoted = quoted_keys.get(key)
                if quoted is None:
                    if not isinstance(key, str):
                        raise TypeError(f"keys must be str, not {type(key).__name__}")
                    quoted = quoted_keys[key] = quote(key)
                text = scalars.get(type(item))
                if text is not None:
                    append(f"{separator}{quoted}: {text(item)}")
                else:
                    append(f"{separator}{quoted}: ")
                    if isinstance(item, (dict, list, tuple)):
                        encode(item, inner)
                    else:
                        append(scalar(item))
                separator = ",\n" + inner
            append("\n" + indent + "}")
        elif isinstance(value, (list, tuple)):
            if not value:
                append("[]")
                return
            inner = indent + "  "
            try:  # a list of strings in one piece (the quoting function refuses anything else)
                append("[\n" + inner + (",\n" + inner).join(map(quote, value)) + "\n" + indent + "]")
                return
            except TypeError:
                pass
            separator = "[\n" + inner
            for item in value:
                text = scalars.get(type(item))
                if text is not None:
                    append(separator + text(item))
                    separator = ",\n" + inner
                    continue
                append(separator)
                if isinstance(item, (dict, list, tuple)):
                    encode(item, inner)
                else:
                    append(scalar(item))
                separator = ",\n" + inner
            append("\n" + indent + "]")
        else:
            text = scalars.get(type(value))
            append(text(value) if text is not None else scalar(value))

    encode(document, "")
    return "".join(parts)
