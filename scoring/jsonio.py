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

from __future__ import annotations

import sys
from _thread import allocate_lock
from itertools import accumulate

DEFAULT_DEPTH_LIMIT = 992  # the egocentric judge's limit; scorers pass their own
DIRECT_PARSE_DEPTH = 1000  # up to this depth a parse is first tried on the caller's stack
_PARSE_STACK_BYTES = 32 * 1024 * 1024
_FRAME_HEADROOM = 100
_RECURSION_MESSAGE = "maximum recursion depth exceeded while decoding a JSON {} from a unicode string"
_WHITESPACE = " \t\n\r"
_limit_lock = allocate_lock()


def _json_module():
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


_scanner = None


def _skip_whitespace(text: str, index: int) -> int:
    rest = text[index:] if index else text
    return len(text) - len(rest.lstrip(_WHITESPACE))


def loads(text: str) -> object:
    """Exactly ``json.loads(text)`` for a ``str`` (same C scanner, same settings,
    same errors), without importing ``json`` and ``re`` unless an error is raised."""
    global _scanner
    if _scanner is None:
        from _json import make_scanner

        _scanner = make_scanner(_DecoderContext())
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

_patterns: dict = {}  # compiled lazily: ``re`` costs a few ms at start-up


def _pattern(name: str):
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
    recursion limit with room for ``depth`` levels (only ever raised, then put back
    unless someone else changed it meanwhile)."""
    import threading

    _json_module()  # the decoder builds its errors from json.decoder: import it here, not deep down
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = loads(text)
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error

    needed = depth + _FRAME_HEADROOM
    with _limit_lock:
        previous_limit = sys.getrecursionlimit()
        raised = previous_limit < needed
        if raised:
            sys.setrecursionlimit(needed)
        try:
            previous_stack = threading.stack_size(_PARSE_STACK_BYTES)
            try:
                worker = threading.Thread(target=target, name="scoring-json-parse", daemon=True)
                worker.start()
            finally:
                threading.stack_size(previous_stack)
            worker.join()
        finally:
            if raised and sys.getrecursionlimit() == needed:
                sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def loads_like_verifier(text: str, depth_limit: int = DEFAULT_DEPTH_LIMIT) -> object:
    """``json.loads(text)`` as a verifier whose decoder fits ``depth_limit`` levels.

    Raises ``json.JSONDecodeError`` exactly where the verifier does, or
    ``RecursionError`` with the decoder's own message when the verifier's decoder
    would enter a container beyond the limit before meeting any syntax error.
    """
    openers = count_openers(text)
    if openers <= depth_limit:  # cannot nest beyond the limit: no scan needed
        return _parse_with_headroom(text, openers)
    depth = nesting_depth(text)
    if depth <= depth_limit:
        return _parse_with_headroom(text, depth)
    beyond = first_container_beyond(text, depth_limit)
    if beyond < 0:  # the two lexical scans agree; kept for safety
        return _parse_with_headroom(text, depth)
    # Would the decoder get to ``beyond`` and open it? Parse the prefix with that one
    # container closed at once: an error at or before ``beyond`` happens first in the
    # verifier as well (the same characters lead up to it, and a container the decoder
    # refuses there is refused with the same message); anything later means the
    # verifier entered the container and hit its limit.
    opener = text[beyond]
    json = _json_module()
    probe = text[: beyond + 1] + ("]" if opener == "[" else "}")
    try:
        _parse_with_headroom(probe, depth_limit + 1)
    except json.JSONDecodeError as error:
        if error.pos <= beyond:
            raise
    raise RecursionError(_RECURSION_MESSAGE.format("array" if opener == "[" else "object"))


def decode_json_document(data: bytes, depth_limit: int = DEFAULT_DEPTH_LIMIT) -> object:
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
_scalar_encoders: dict = {}


def _scalars() -> dict:
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
        for kind, encode_kind in ((bool, scalars[bool]), (int, int.__repr__), (float, _float_text), (str, quote)):
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
                    if type(key) is not str:
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
