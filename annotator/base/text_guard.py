"""NUL characters in request text: refused everywhere with the same 400.

PostgreSQL refuses a NUL character in text (``DataError: ... cannot contain NUL``), so a
NUL in a username, an event field, an attestation or a query filter was a 500 there, while
SQLite stored it. The API's parsers refuse it in bodies (``annotator.entry.api.parsers``); this
middleware refuses it in query strings (``/audit/?operation=a%00b``) and in url-encoded form
bodies (the pages read ``request.POST`` directly), on pages and API routes alike, with the
one JSON error body. Multipart bodies are left to their parser.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from django.http import JsonResponse

NUL = "\x00"
NUL_MESSAGE = "text must not contain NUL characters (\\u0000)"


def nul_path(data, path: str = "") -> str | None:
    """The dotted path of the first string holding a NUL in ``data`` (a parsed body:
    dicts, lists, strings), ``""`` for the top level, or None when there is none."""
    if isinstance(data, str):
        return path if NUL in data else None
    if isinstance(data, dict):
        for key, value in data.items():
            here = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                return here.replace(NUL, "\\u0000")
            found = nul_path(value, here)
            if found is not None:
                return found
    elif isinstance(data, list):
        for position, value in enumerate(data):
            found = nul_path(value, f"{path}.{position}" if path else str(position))
            if found is not None:
                return found
    return None


class NulQueryStringMiddleware:
    """400 for a query string with a NUL character in any name or value."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        query = request.META.get("QUERY_STRING", "")
        if "%00" in query or NUL in query:
            refused = _refused(parse_qsl(query, keep_blank_values=True, errors="replace"))
            if refused is not None:
                return refused
        if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
            refused = _refused((name, value) for name in request.POST for value in request.POST.getlist(name))
            if refused is not None:
                return refused
        return self.get_response(request)


def _refused(pairs) -> JsonResponse | None:
    for name, value in pairs:
        if NUL in name or NUL in value:
            field = name.replace(NUL, "\\u0000")
            body = {"error": {"code": "invalid", "field": field, "message": f"{field}: {NUL_MESSAGE}"}}
            return JsonResponse(body, status=400)
    return None
