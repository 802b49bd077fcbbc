"""One rule for what a row may hold, applied before storage on every database.

PostgreSQL refuses what SQLite stores: text longer than its column, a NUL character in text
or in JSON, integers past the column's range; every database takes a float of 1e308 that no
JSON reader or frame arithmetic survives, and control characters in a name or a title. So
the check runs before each save, with the model's own field definitions (``max_length``,
integer kind), and refuses with ``InvalidInput`` naming the field: a 400 on every entry point,
where PostgreSQL would answer a 500 and SQLite would store it. Every model of the app derives
from :class:`CheckedModel` (rows written by ``bulk_create`` or ``update()`` are judged where
they are made).
"""

from __future__ import annotations

import math
import re

from django.db import models

from annotator.base.errors import InvalidInput

NUL = "\x00"
# The integer columns' ranges on PostgreSQL (SQLite stores 64 bits whatever the column).
INTEGER_RANGES = {
    "SmallIntegerField": (-(2**15), 2**15 - 1),
    "PositiveSmallIntegerField": (0, 2**15 - 1),
    "IntegerField": (-(2**31), 2**31 - 1),
    "PositiveIntegerField": (0, 2**31 - 1),
    "BigIntegerField": (-(2**63), 2**63 - 1),
    "PositiveBigIntegerField": (0, 2**63 - 1),
    "BigAutoField": (1, 2**63 - 1),
    "AutoField": (1, 2**31 - 1),
}
MAX_FLOAT = 1e15  # seconds, frames, scores, sizes: far past any real value, far below overflow
# Names, titles, labels, ids: one line of text, so no control characters but tab, line feed
# and carriage return (multi-line text, ``TextField``, is judged for NUL only).
SINGLE_LINE = {"CharField", "SlugField", "EmailField", "URLField", "FileField"}
CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")


def value_problem(field: models.Field, value) -> str | None:
    """What is wrong with ``value`` for ``field`` (the stored form), or None."""
    if value is None:
        return None
    kind = field.get_internal_type()
    if isinstance(value, str):
        if NUL in value:
            return "text must not contain NUL characters (\\u0000)"
        if kind in SINGLE_LINE:
            limit = getattr(field, "max_length", None)
            if limit and len(value) > limit:
                return f"at most {limit} characters (got {len(value)})"
            if CONTROL.search(value):
                return "text must not contain control characters"
        return None
    if kind in INTEGER_RANGES and isinstance(value, int) and not isinstance(value, bool):
        low, high = INTEGER_RANGES[kind]
        return None if low <= value <= high else f"a whole number from {low} to {high}"
    if kind == "FloatField" and isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or abs(value) > MAX_FLOAT:
            return f"a finite number of at most {MAX_FLOAT:g} in size"
        return None
    if kind == "JSONField":
        return json_problem(value)
    return None


def json_problem(value, depth: int = 0) -> str | None:
    """NUL in any string or key, or a non-finite number, in a JSON value."""
    if isinstance(value, str):
        return "text must not contain NUL characters (\\u0000)" if NUL in value else None
    if isinstance(value, float):
        return None if math.isfinite(value) else "numbers must be finite"
    if isinstance(value, dict):
        for key, item in value.items():
            problem = (NUL in str(key) and "keys must not contain NUL characters") or json_problem(item, depth + 1)
            if problem:
                return problem
    elif isinstance(value, (list, tuple)):
        for item in value:
            problem = json_problem(item, depth + 1)
            if problem:
                return problem
    return None


def check_row(instance: models.Model) -> None:
    """``InvalidInput`` naming the first field whose value the rule refuses."""
    for field in instance._meta.concrete_fields:
        if field.is_relation:
            continue
        value = field.value_from_object(instance)
        if hasattr(value, "name") and not isinstance(value, str):  # a file field's file
            value = value.name
        problem = value_problem(field, value)
        if problem:
            raise InvalidInput(f"{field.name}: {problem}", field=field.name)


class CheckedModel(models.Model):
    """A model whose rows pass :func:`check_row` before every save."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        check_row(self)
        super().save(*args, **kwargs)
