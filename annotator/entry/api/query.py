"""Whole numbers read from a query string, and the URL of another page of the same list."""

from __future__ import annotations

from rest_framework.utils.urls import replace_query_param

from annotator.base.errors import InvalidInput


def whole_number(request, name: str, default: int, most: int, least: int = 0) -> int:
    """``?name=`` as an int from ``least`` to ``most`` (``default`` when absent); ASCII digits
    only (``"²".isdigit()`` is true, and ``int("²")`` raises): anything else is a 400 naming it."""
    value = request.query_params.get(name)
    if value in (None, ""):
        return default
    if not (value.isascii() and value.isdigit()) or not least <= int(value) <= most:
        raise InvalidInput(f"{name} must be a whole number from {least} to {most:,}", field=name)
    return int(value)


def with_query(request, **values) -> str:
    url = request.build_absolute_uri()
    for name, value in values.items():
        url = replace_query_param(url, name, value)
    return url
