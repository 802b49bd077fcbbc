from __future__ import annotations

import re

from django.db import transaction

from annotator.base.canonical import canonical_sha256
from annotator.base.errors import InvalidInput
from annotator.models import TaskKind
from annotator.models.audit_log import record
from annotator.models.taskkind_schema import SchemaError, check_schema
from scoring.registry import scorers_of

# Lower-case letters, digits, ``-`` and ``_``, starting with a letter or digit; the
# column holds 50 characters. The slug names files, zip folders and URLs.
SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,49}")
MAX_NAME_CHARS = 200


def validate_task_kind(*, slug: str, name: str, scorer_id: str, schema) -> None:
    """What a new kind must be (writes nothing): the editor's dry run calls it alone."""
    if not SLUG.fullmatch(slug):
        raise InvalidInput(
            "a slug is 1 to 50 lower-case letters, digits, '-' or '_', starting with a letter or digit", field="slug"
        )
    if not name.strip() or len(name) > MAX_NAME_CHARS:
        raise InvalidInput(f"a name is 1 to {MAX_NAME_CHARS} characters", field="name")
    try:
        check_schema(schema)
    except SchemaError as exc:
        # The path names the broken part: ``schema.tolerance``, ``schema.fields[2].choices``.
        raise InvalidInput(str(exc), field=f"schema.{exc.field}" if exc.field else "schema") from None
    allowed = {scorer.scorer_id for scorer in scorers_of(schema["family"])}  # the registry's, by family
    if scorer_id not in allowed:
        raise InvalidInput(f"scorer {scorer_id!r} does not grade the {schema['family']} family", field="scorer_id")
    if TaskKind.objects.filter(slug=slug).exists():
        raise InvalidInput(f"a task kind {slug!r} exists already", field="slug")


@transaction.atomic
def do_create_task_kind(
    *, actor, slug: str, name: str, scorer_id: str, schema: dict, description: str = ""
) -> TaskKind:
    """Create a task kind (no code needed). It validates its input again: callers inside
    the project (the moment importer's own kind) pass no user input and no check."""
    validate_task_kind(slug=slug, name=name, scorer_id=scorer_id, schema=schema)
    kind = TaskKind.objects.create(slug=slug, name=name, scorer_id=scorer_id, schema=schema, description=description)
    _, digest = canonical_sha256(schema)
    record(actor, "create_task_kind", kind, hashes={"schema": digest})
    return kind


def check_create_task_kind(*, actor, slug: str, name: str, scorer_id: str, schema, description: str = "") -> TaskKind:
    """A kind a user defined (the task-kind editor, ``POST /api/task-kinds/``): refused
    with the field ``validate_task_kind`` names, then ``do_create_task_kind``."""
    validate_task_kind(slug=slug, name=name, scorer_id=scorer_id, schema=schema)
    return do_create_task_kind(
        actor=actor, slug=slug, name=name, scorer_id=scorer_id, schema=schema, description=description
    )
