"""The one JSON parser of the API: DRF's, after a nesting-depth pre-scan, refusing NUL.

``json.loads`` recurses once per ``[`` or ``{``; a body such as ``"[" * 1000 + "]" * 1000``
raised ``RecursionError`` inside the parser, which DRF does not catch (a 500 with a
traceback, on every JSON endpoint, signed in or not). The pre-scan walks the bytes
once, skipping strings, and refuses a body nested deeper than
``FRAMELEDGER_MAX_JSON_DEPTH`` with a 400 before ``json.loads`` runs.

Text with a NUL character (``"\u0000"``) is refused too, in any string of the body, keys
included, and in form bodies (``NulFreeFormParser``): PostgreSQL cannot store it in a text
column (``DataError``, a 500) while SQLite stores it, so both databases answer the same
``400 {"error": {"code": "invalid", "field": ...}}`` before any view runs. Query strings get
the same answer from ``annotator.base.text_guard``.
"""

from __future__ import annotations

import io
import re

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser

from annotator.base.errors import InvalidInput
from annotator.base.text_guard import NUL_MESSAGE, nul_path

# A JSON string (with escapes), or one bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset(b"[{")


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in ``data`` (brackets inside strings
    do not count). Malformed input gets a number too; the parser reports the error."""
    depth = deepest = 0
    for match in _TOKENS.finditer(data):
        token = match.group()
        if len(token) != 1:
            continue  # a string
        if token[0] in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


class DepthLimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = stream.read() if stream is not None else b""
        limit = settings.FRAMELEDGER_MAX_JSON_DEPTH
        if json_depth(data) > limit:
            raise ParseError(f"JSON parse error - nested deeper than {limit} levels")
        try:
            parsed = super().parse(io.BytesIO(data), media_type, parser_context)
        except RecursionError:  # only if the limit is set above what the interpreter allows
            raise ParseError(f"JSON parse error - nested too deeply (limit {limit})") from None
        refuse_nul(parsed)
        return parsed


def refuse_nul(data) -> None:
    path = nul_path(data)
    if path is not None:
        raise InvalidInput(f"{path or 'the body'}: {NUL_MESSAGE}", field=path.split(".")[0] or "body")


class NulFreeFormParser(FormParser):
    """DRF's form parser, refusing NUL in any key or value like the JSON parser."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        refuse_nul({key: data.getlist(key) for key in data})
        return data
