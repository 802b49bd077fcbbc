"""JSON helpers that behave exactly like the published verifiers."""

from __future__ import annotations

import json


def decode_json_document(data: bytes) -> object:
    """Decode UTF-8 bytes and parse one JSON document.

    Raises what ``json.load`` on a UTF-8 text file raises (``UnicodeDecodeError``,
    ``json.JSONDecodeError``, ``RecursionError``); callers turn those into reasons.
    """
    return json.loads(data.decode("utf-8"))


def dumps_indented(document: object, *, newline: bool) -> bytes:
    """``json.dumps(document, indent=2)`` (ASCII), optionally with a final newline."""
    text = json.dumps(document, indent=2)
    if newline:
        text += "\n"
    return text.encode("utf-8")
