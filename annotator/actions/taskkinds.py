from __future__ import annotations

from django.db import transaction

from annotator.actions.audit import record
from annotator.canonical import canonical_sha256
from annotator.errors import InvalidInput
from annotator.models import TaskKind
from annotator.taskkinds import SchemaError, check_schema

KNOWN_SCORERS_BY_FAMILY = {
    "actions": {"egocentric-f1-v2", "egocentric-f1-v1"},
    "break_points": {"hierarchical-bottleneck-v1", "hierarchical-bottleneck-v2"},
    "moments": {"moment-utility-v1"},
}


def check_task_kind(*, slug: str, name: str, scorer_id: str, schema) -> None:
    try:
        check_schema(schema)
    except SchemaError as exc:
        raise InvalidInput(str(exc), field="schema") from None
    allowed = KNOWN_SCORERS_BY_FAMILY[schema["family"]]
    if scorer_id not in allowed:
        raise InvalidInput(f"scorer {scorer_id!r} does not grade the {schema['family']} family", field="scorer_id")
    if TaskKind.objects.filter(slug=slug).exists():
        raise InvalidInput(f"a task kind {slug!r} exists already", field="slug")


@transaction.atomic
def do_create_task_kind(
    *, actor, slug: str, name: str, scorer_id: str, schema: dict, description: str = ""
) -> TaskKind:
    """Create a task kind a maintainer defined (no code needed)."""
    check_task_kind(slug=slug, name=name, scorer_id=scorer_id, schema=schema)
    kind = TaskKind.objects.create(slug=slug, name=name, scorer_id=scorer_id, schema=schema, description=description)
    _, digest = canonical_sha256(schema)
    record(actor, "create_task_kind", kind, hashes={"schema": digest})
    return kind
