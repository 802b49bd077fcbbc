"""The path converter for database ids in every URL: ``<id:packet_id>``.

Django's ``<int:…>`` matches any run of digits, so ``/api/packets/99999999999999999999/``
reached the views and the database driver failed on an integer it cannot store (SQLite:
``OverflowError``; PostgreSQL: ``integer out of range``), a 500. Ids are positive 64-bit
integers at most, so ``id`` matches 1–18 digits (every value below 10¹⁸ fits a signed
64-bit column); a longer number matches no route and is a plain 404.

Importing this module registers the converter; every URL module that uses it imports it. The
OpenAPI schema describes such a parameter as an integer from 0 to 10¹⁸ − 1
(``PATH_CONVERTER_OVERRIDES`` in ``deploy/settings.py``).
"""

from django.urls import register_converter

MAX_DIGITS = 18


class IdConverter:
    regex = f"[0-9]{{1,{MAX_DIGITS}}}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(int(value))


register_converter(IdConverter, "id")
