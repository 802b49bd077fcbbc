"""The path converter for database ids in every URL: ``<id:packet_id>``.

Django's ``<int:…>`` matches any run of digits, so ``/api/packets/99999999999999999999/``
reached the views and the database driver failed on an integer it cannot store (SQLite:
``OverflowError``; PostgreSQL: ``integer out of range``), a 500. Ids are positive 64-bit
integers at most, so ``id`` matches 1–18 digits (every value below 10¹⁸ fits a signed
64-bit column); a longer number matches no route and is a plain 404.

``parse_id`` applies the same rule to ids that come in query strings, forms and JSON bodies.

Importing this module registers the converter; every URL module that uses it imports it. The
OpenAPI schema describes such a parameter as an integer from 0 to 10¹⁸ − 1
(``PATH_CONVERTER_OVERRIDES`` in ``deploy/settings.py``).
"""

import re

from django.urls import register_converter

MAX_DIGITS = 18
_ID = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")


class IdConverter:
    regex = f"[0-9]{{1,{MAX_DIGITS}}}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(int(value))


register_converter(IdConverter, "id")


def parse_id(value) -> int | None:
    """``value`` as an id (an int, or a string of 1-18 digits), else None: a number no column
    can hold is no id, like ``"abc"``. Booleans are not ids."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**MAX_DIGITS else None
    if isinstance(value, str) and _ID.fullmatch(value.strip()):
        return int(value)
    return None
