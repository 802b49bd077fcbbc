"""Task-kind schemas: their shape, their checking, and event validation.

Pure Python (no Django), so the schema rules are tested without a database.

A schema is a JSON object::

    {
      "family": "actions" | "break_points" | "moments",   # which scorer family aligns it
      "root_key": "actions",                              # key of the event list in exports
      "fields": [ {"name": ..., "type": ..., ...}, ... ], # in export order
      "identity_fields": [...],   # fields that say "the same event" (may be empty)
      "boundary_fields": ["start_frame", "end_frame"],    # frame boundaries, or []
      "tolerance": 12,            # boundary tolerance in frames (scorer parameter)
      "sort_keys": [...],         # export order of events
      "annotator_assistance": false  # optional: annotators may use moment search (default false)
    }

Field types: ``enum`` (``choices``), ``enum_set`` (``choices``, ``min_items``), ``int``
(``min``/``max``; ``frame: true`` bounds it by the video's frame count), ``bool``,
``string`` (``max_length``), ``token_list`` (ordered list of objects whose
``subfields`` are enums; ``max_items``; ``first_token_choices`` may narrow a sub-field
for token 0), ``interval_list`` (list of ``[start, end]`` seconds; ``grid_step``).
Each field may set ``required`` (default true) and ``export`` (default true).
"""

from __future__ import annotations

import json
import math
from typing import Any

from annotator.base.families import adapter_for, family_names

FIELD_TYPES = {"enum", "enum_set", "int", "bool", "string", "token_list", "interval_list"}


class SchemaError(ValueError):
    """The task-kind schema itself is malformed. ``field`` is the path of the broken
    part (``family``, ``tolerance``, ``fields[2].choices``), or ``None`` for the whole."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class EventInvalid(ValueError):
    """An event does not satisfy its task kind. ``field`` names the offending field."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def check_schema(schema: Any) -> dict:
    """Validate a schema written by a maintainer; return it unchanged or raise SchemaError."""
    if not isinstance(schema, dict):
        raise SchemaError("schema must be an object")
    if schema.get("family") not in family_names():
        raise SchemaError(f"family must be one of {family_names()}", field="family")
    if not isinstance(schema.get("root_key"), str) or not schema["root_key"]:
        raise SchemaError("root_key must be a non-empty string", field="root_key")
    fields = schema.get("fields")
    if not isinstance(fields, list) or not fields:
        raise SchemaError("fields must be a non-empty list", field="fields")
    names = []
    for position, field in enumerate(fields):
        _check_field(field, f"fields[{position}]")
        if field["name"] in names:
            raise SchemaError(f"field {field['name']}: field names must be unique", field=f"fields[{position}].name")
        names.append(field["name"])
    for key in ("identity_fields", "boundary_fields", "sort_keys"):
        listed = schema.get(key, [])
        if not isinstance(listed, list) or any(name not in names for name in listed):
            raise SchemaError(f"{key} must list defined fields", field=key)
    boundaries = schema.get("boundary_fields", [])
    if boundaries and len(boundaries) != 2:
        raise SchemaError("boundary_fields must name exactly a start and an end field", field="boundary_fields")
    tolerance = schema.get("tolerance", 0)
    if not isinstance(tolerance, int) or isinstance(tolerance, bool) or tolerance < 0:
        raise SchemaError("tolerance must be a non-negative integer (frames)", field="tolerance")
    if not isinstance(schema.get("annotator_assistance", False), bool):
        raise SchemaError("annotator_assistance must be true or false", field="annotator_assistance")
    return schema


def _check_field(field: Any, path: str) -> None:
    if not isinstance(field, dict) or not isinstance(field.get("name"), str) or not field["name"]:
        raise SchemaError("each field needs a name", field=f"{path}.name")
    kind = field.get("type")
    if kind not in FIELD_TYPES:
        raise SchemaError(f"field {field['name']}: type must be one of {sorted(FIELD_TYPES)}", field=f"{path}.type")
    if kind in {"enum", "enum_set"}:
        choices = field.get("choices")
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
            raise SchemaError(
                f"field {field['name']}: choices must be a non-empty list of strings", field=f"{path}.choices"
            )
    for key in ("min", "max", "min_items", "max_items", "max_length"):
        value = field.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise SchemaError(f"field {field['name']}: {key} must be an integer", field=f"{path}.{key}")
    if kind == "token_list":
        subfields = field.get("subfields")
        if not isinstance(subfields, list) or not subfields:
            raise SchemaError(f"field {field['name']}: token_list needs subfields", field=f"{path}.subfields")
        for number, sub in enumerate(subfields):
            if not isinstance(sub, dict) or sub.get("type") != "enum":
                raise SchemaError(
                    f"field {field['name']}: token sub-fields must be enums", field=f"{path}.subfields[{number}]"
                )
            _check_field(sub, f"{path}.subfields[{number}]")


def packet_schema(packet) -> dict:
    """The schema a packet's events follow: its task kind's, with the packet's
    ``parameters`` applied by the family's adapter (e.g. the two tennis players)."""
    schema = packet.task_kind.schema
    return adapter_for(schema["family"]).packet_schema(schema, packet.parameters)


def validate_event(schema: dict, event: Any, *, frame_count: int | None = None, duration: float | None = None) -> dict:
    """Return the cleaned event (only schema fields, in schema order) or raise EventInvalid."""
    if not isinstance(event, dict):
        raise EventInvalid("event", "must be a JSON object")
    known = {field["name"] for field in schema["fields"]}
    unknown = sorted(set(event) - known)
    if unknown:
        raise EventInvalid(unknown[0], "is not a field of this task kind")
    cleaned: dict[str, Any] = {}
    for field in schema["fields"]:
        name = field["name"]
        if name not in event or event[name] is None:
            if field.get("required", True):
                raise EventInvalid(name, "is required")
            continue
        cleaned[name] = _validate_value(field, event[name], frame_count=frame_count, duration=duration)
    boundaries = schema.get("boundary_fields") or []
    if boundaries and all(b in cleaned for b in boundaries):
        start, end = (cleaned[b] for b in boundaries)
        if not start < end:
            raise EventInvalid(boundaries[1], f"must be after {boundaries[0]} ({start})")
    return cleaned


def _validate_value(field: dict, value: Any, *, frame_count: int | None, duration: float | None) -> Any:
    name, kind = field["name"], field["type"]
    if kind == "enum":
        if not isinstance(value, str) or value not in field["choices"]:
            raise EventInvalid(name, f"{value!r} is not one of the allowed values")
        return value
    if kind == "enum_set":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise EventInvalid(name, "must be a list of strings")
        if len(value) < field.get("min_items", 1):
            raise EventInvalid(name, f"needs at least {field.get('min_items', 1)} value(s)")
        if len(set(value)) != len(value):
            raise EventInvalid(name, "repeats a value")
        bad = [v for v in value if v not in field["choices"]]
        if bad:
            raise EventInvalid(name, f"{bad[0]!r} is not one of the allowed values")
        return sorted(value)
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise EventInvalid(name, "must be an integer")
        low = field.get("min")
        high = field.get("max")
        if field.get("frame"):
            low = 0 if low is None else low
            if frame_count:
                high = frame_count - 1 if high is None else min(high, frame_count - 1)
        if low is not None and value < low:
            raise EventInvalid(name, f"must be at least {low}")
        if high is not None and value > high:
            raise EventInvalid(name, f"must be at most {high}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise EventInvalid(name, "must be true or false")
        return value
    if kind == "string":
        if not isinstance(value, str) or not value.strip():
            raise EventInvalid(name, "must be a non-empty string")
        if len(value) > field.get("max_length", 2000):
            raise EventInvalid(name, f"is longer than {field.get('max_length', 2000)} characters")
        return value
    if kind == "token_list":
        return _validate_tokens(field, value)
    return _validate_intervals(field, value, duration=duration)


def _validate_tokens(field: dict, value: Any) -> list:
    name = field["name"]
    if not isinstance(value, list):
        raise EventInvalid(name, "must be a list")
    if len(value) > field.get("max_items", 512):
        raise EventInvalid(name, f"has more than {field.get('max_items', 512)} tokens")
    tokens = []
    for position, token in enumerate(value):
        if not isinstance(token, dict):
            raise EventInvalid(f"{name}[{position}]", "must be an object")
        cleaned = {}
        for sub in field["subfields"]:
            choices = sub["choices"]
            if position == 0 and sub["name"] in field.get("first_token_choices", {}):
                choices = field["first_token_choices"][sub["name"]]
            item = token.get(sub["name"])
            if item not in choices:
                raise EventInvalid(f"{name}[{position}].{sub['name']}", f"{item!r} is not one of the allowed values")
            cleaned[sub["name"]] = item
        extra = set(token) - {sub["name"] for sub in field["subfields"]}
        if extra:
            raise EventInvalid(f"{name}[{position}].{sorted(extra)[0]}", "is not a token field")
        tokens.append(cleaned)
    return tokens


def _validate_intervals(field: dict, value: Any, *, duration: float | None) -> list:
    name = field["name"]
    if not isinstance(value, list) or not value:
        raise EventInvalid(name, "must be a non-empty list of [start, end] pairs")
    step = field.get("grid_step")
    intervals = []
    for position, pair in enumerate(value):
        label = f"{name}[{position}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise EventInvalid(label, "must be a [start, end] pair")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in pair):
            raise EventInvalid(label, "must hold two finite numbers")
        start, end = float(pair[0]), float(pair[1])
        if not 0 <= start < end:
            raise EventInvalid(label, "needs 0 <= start < end")
        if duration is not None and end > duration + 1e-6:
            raise EventInvalid(label, f"ends after the video ({duration} s)")
        if step:
            for x in (start, end):
                on_grid = abs(x / step - round(x / step)) * step <= 1e-6
                at_end = duration is not None and abs(x - duration) <= 1e-6
                if not (on_grid or at_end):
                    raise EventInvalid(label, f"{x} is not on the {step} s grid")
        intervals.append([start, end])
    return intervals


def sort_events(schema: dict, events: list[dict]) -> list[dict]:
    """Events in export order (``sort_keys``; missing values sort first)."""
    keys = schema.get("sort_keys") or []

    def key(event: dict) -> tuple:
        return tuple(
            (event.get(name) is not None, event.get(name) if event.get(name) is not None else 0) for name in keys
        )

    return sorted(events, key=lambda e: (key(e), _stable(e)))


def _stable(event: dict) -> str:
    return json.dumps(event, sort_keys=True)


def export_event(schema: dict, event: dict) -> dict:
    """The event as a scorer reads it: exported fields only, in schema order."""
    return {f["name"]: event[f["name"]] for f in schema["fields"] if f.get("export", True) and f["name"] in event}
