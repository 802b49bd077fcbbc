"""The shape of a JSON request body: every JSON endpoint of the API takes an object.

A body that is valid JSON but not an object (an array, a string, a number, ``null``,
``true``) is refused while it is parsed, with the one error body
(``400 {"error": {"code": "invalid", "field": "body", ...}}``), so no view ever meets
``request.data`` of the wrong type (``POST /api/videos/`` with ``[1, 2]`` was a 500).
Form and multipart bodies are dictionaries already.
"""

from __future__ import annotations

from annotator.base.errors import InvalidInput
from annotator.entry.api.parsers import DepthLimitedJSONParser

JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


class ObjectBodyMixin:
    """Put in front of a JSON parser class: the parsed body must be a JSON object."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if not isinstance(data, dict):
            found = "null" if data is None else JSON_TYPES.get(type(data), type(data).__name__)
            raise InvalidInput(f"the request body must be a JSON object, not {found}", field="body")
        return data


class JSONObjectParser(ObjectBodyMixin, DepthLimitedJSONParser):
    """The API's JSON parser: depth-limited (``parsers.py``), and the body must be an object."""
