"""Property-based checks of scoring/jsonio.py against the standard library itself.

* ``loads`` is ``json.loads`` (same value or the same error) on any text;
* ``loads_like_verifier(text, L)`` is ``json.loads`` run by a decoder that has room for
  exactly ``L`` nesting levels (L = 992, 994): the reference runs ``json.loads`` on a
  fresh thread whose recursion limit is set so that exactly ``L`` levels fit; the texts
  nest to within a few levels of L and then continue with a token soup;
* ``dumps_indent2`` is ``json.dumps(value, indent=2)``.
"""

from __future__ import annotations

import json
import sys
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.jsonio import dumps_indent2, loads, loads_like_verifier

TOKENS = ["[", "]", "{", "}", '"', '"k": ', ",", ":", "1", " ", "\\", "a", "\r\n", '"[{"', "true", "-", "0.5e1"]
soup = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)


def outcome(function, *args) -> tuple:
    try:
        return ("ok", json.dumps(function(*args), sort_keys=True))
    except RecursionError as error:
        return ("RecursionError", str(error))
    except ValueError as error:
        return (type(error).__name__, str(error))


def _on_thread(function):
    found = {}
    worker = threading.Thread(target=lambda: found.setdefault("value", function()))
    worker.start()
    worker.join()
    return found["value"]


def _base_depth() -> int:
    """Recursion levels in use when ``json.loads`` starts on a fresh thread, found
    from where nested arrays start to fail under a known limit."""

    def probe() -> int:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(200)
        try:
            depth = 1
            while outcome(json.loads, "[" * depth + "]" * depth)[0] == "ok":  # the reference's call path
                depth += 1
            return 200 - (depth - 1)
        finally:
            sys.setrecursionlimit(limit)

    return _on_thread(probe)


BASE = _base_depth()


def reference(text: str, levels: int) -> tuple:
    """``json.loads(text)`` by a decoder with room for exactly ``levels`` levels."""

    def run() -> tuple:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(BASE + levels)
        try:
            return outcome(json.loads, text)
        finally:
            sys.setrecursionlimit(limit)

    return _on_thread(run)


LIMITS = (992, 994)  # the egocentric and tennis judges


def test_the_reference_has_exactly_the_room_it_is_given():
    for levels in LIMITS:
        assert reference("[" * levels + "]" * levels, levels)[0] == "ok"
        assert reference("[" * (levels + 1) + "]" * (levels + 1), levels) == (
            "RecursionError",
            "maximum recursion depth exceeded while decoding a JSON array from a unicode string",
        )
        objects = '{"k": ' * levels + "{}" + "}" * levels
        assert reference(objects, levels) == (
            "RecursionError",
            "maximum recursion depth exceeded while decoding a JSON object from a unicode string",
        )


@settings(max_examples=300, deadline=None)
@given(soup)
def test_loads_is_json_loads(text: str):
    assert outcome(loads, text) == outcome(json.loads, text)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(LIMITS),
    st.integers(min_value=-14, max_value=3),
    st.sampled_from(["[", '{"k": ', "[1, "]),
    soup,
)
def test_the_depth_limit_is_decided_as_the_decoder_would(levels: int, offset: int, piece: str, tail: str):
    """Texts that reach the limit, with token soup around it: syntax errors just
    before, at and beyond the limit, strings holding brackets, CRLF, literals."""
    text = piece * (levels + offset) + tail
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # the interpreter's default (hypothesis raises it while a test runs)
    try:
        ours = outcome(loads_like_verifier, text, levels)
    finally:
        sys.setrecursionlimit(limit)
    assert ours == reference(text, levels)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_dumps_indent2_is_json_dumps_indent_2(value):
    assert dumps_indent2(value) == json.dumps(value, indent=2)
