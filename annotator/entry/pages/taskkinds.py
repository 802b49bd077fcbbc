"""The task-kind editor (maintainers): the schema as a form, with a live preview of the
annotation form (``kind_editor.js``), and the kinds that exist.

A POST turns the form into a schema (``schema_from_form``, which only reads the form
and never judges it) and calls ``check_create_task_kind``, the function behind
``POST /api/task-kinds/``: its ``validate_task_kind`` is the one validator, and the field
it names (``schema.fields[2].choices``, ``schema.tolerance``, ``scorer_id``) is marked
on the form. Everyone but a maintainer gets 404.
"""

from __future__ import annotations

import re

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotator.actions.taskkinds import check_create_task_kind, validate_task_kind
from annotator.base.errors import WorkflowError
from annotator.base.families import adapter_for, family_names
from annotator.entry.pages.site import _or_404
from annotator.models import TaskKind
from annotator.reads import access
from scoring.registry import scorers_of

KEYS = ("slug", "name", "description", "family", "scorer_id", "root_key", "tolerance",
        "boundary_start", "boundary_end", "sort_keys", "assistance")  # fmt: skip

# The types the form edits; token lists (the tennis shots) need sub-fields, which the
# API takes (``POST /api/task-kinds/``).
FORM_TYPES = ("enum", "enum_set", "int", "bool", "string", "interval_list")
CHOICE_TYPES = {"enum", "enum_set"}
# The keys of a field the form holds; a kind with others is copied through the API only.
FORM_KEYS = {"name", "type", "required", "choices", "min", "max", "min_items", "frame"}
MAX_ROWS = 60
BLANK_ROWS = 2


def form_from_schema(kind: TaskKind) -> tuple[dict, list[dict]] | None:
    """The editor's form holding ``kind`` (a copy to start from), or ``None`` when a
    field has a type the form does not edit."""
    schema = kind.schema
    if any(field["type"] not in FORM_TYPES or set(field) - FORM_KEYS for field in schema["fields"]):
        return None  # a copy would lose what the form cannot hold (a grid step, sub-fields …)
    boundaries = list(schema.get("boundary_fields") or []) + ["", ""]
    form = {key: "" for key in KEYS} | {
        "family": schema["family"],
        "scorer_id": kind.scorer_id,
        "root_key": schema["root_key"],
        "tolerance": str(schema.get("tolerance", 0)),
        "boundary_start": boundaries[0],
        "boundary_end": boundaries[1],
        "sort_keys": ", ".join(schema.get("sort_keys") or []),
        "assistance": "on" if schema.get("annotator_assistance") is True else "",
    }
    identity = set(schema.get("identity_fields") or [])
    rows = [
        {
            "name": field["name"],
            "type": field["type"],
            "required": field.get("required", True),
            "identity": field["name"] in identity,
            "choices": "\n".join(field.get("choices") or []),
            "min": str(field.get("min", field.get("min_items", ""))),
            "max": str(field["max"]) if "max" in field else "",
            "frame": bool(field.get("frame")),
        }
        for field in schema["fields"]
    ]
    return form, rows


def _starting_point(slug: str | None) -> tuple[dict, list[dict], str | None]:
    """The form, its rows and the kind copied: the kind named by ``?from=``, else the
    first built-in kind the form can edit."""
    kinds = TaskKind.objects.order_by("-builtin", "pk")
    chosen = kinds.filter(slug=slug) if slug else kinds
    for kind in chosen:
        copied = form_from_schema(kind)
        if copied is not None:
            form, rows = copied
            return form | {"slug": "", "name": "", "description": ""}, rows, kind.slug
    family = family_names()[0]
    scorers = scorers_of(family)
    form = {key: "" for key in KEYS} | {"family": family, "scorer_id": scorers[0].scorer_id if scorers else ""}
    return form, [], None


def _int_or_text(text: str):
    """An integer when the text is one; otherwise the text, which the validator names."""
    text = text.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def posted_row_count(data) -> int:
    try:
        return max(0, min(int(data.get("field_count", "0")), MAX_ROWS))
    except ValueError:
        return 0


def form_rows(data) -> list[dict]:
    """The field rows as posted (``field-<i>-name`` …), blank rows dropped; each keeps
    its place on the form as ``posted`` (``schema.fields[i]`` is the i-th row kept)."""
    rows = []
    for i in range(posted_row_count(data)):
        row = {
            "posted": i,
            "name": data.get(f"field-{i}-name", "").strip(),
            "type": data.get(f"field-{i}-type", ""),
            "required": data.get(f"field-{i}-required") == "on",
            "choices": data.get(f"field-{i}-choices", ""),
            "min": data.get(f"field-{i}-min", "").strip(),
            "max": data.get(f"field-{i}-max", "").strip(),
            "frame": data.get(f"field-{i}-frame") == "on",
            "identity": data.get(f"field-{i}-identity") == "on",
        }
        if row["name"] or row["choices"].strip():
            rows.append(row)
    return rows


def schema_from_form(form: dict, rows: list[dict]) -> dict:
    """The schema the form describes, as ``POST /api/task-kinds/`` would receive it.
    Optional keys are written only when set, so a kind made here equals the same kind
    posted to the API (``kind_editor_model.js`` builds the same object for the preview)."""
    fields = []
    for row in rows:
        field = {"name": row["name"], "type": row["type"]}
        if row["type"] in CHOICE_TYPES:
            field["choices"] = [line.strip() for line in row["choices"].splitlines() if line.strip()]
        if row["type"] == "enum_set" and row["min"]:
            field["min_items"] = _int_or_text(row["min"])  # the "min" box: at least this many values
        if row["type"] == "int":
            for key in ("min", "max"):
                if row[key]:
                    field[key] = _int_or_text(row[key])
            if row["frame"]:
                field["frame"] = True
        if not row["required"]:
            field["required"] = False
        fields.append(field)
    boundaries = [name for name in (form["boundary_start"].strip(), form["boundary_end"].strip()) if name]
    schema = {
        "family": form["family"],
        "root_key": form["root_key"].strip(),
        "fields": fields,
        "boundary_fields": boundaries,
        "tolerance": _int_or_text(form["tolerance"] or "0"),
    }
    identity = [row["name"] for row in rows if row["identity"]]
    if identity:
        schema["identity_fields"] = identity
    if _names(form["sort_keys"]):
        schema["sort_keys"] = _names(form["sort_keys"])
    if form.get("assistance") == "on":  # moment search for annotators (off: blind, no help)
        schema["annotator_assistance"] = True
    return schema


def _scorers() -> list[dict]:
    return [
        {"id": s.scorer_id, "family": family, "description": s.description}
        for family in family_names()
        for s in scorers_of(family)
    ]


def _error_target(field: str | None) -> tuple[str, int | None]:
    """The form part an error names: (``tolerance``, None) or (``choices``, row 2)."""
    field = (field or "").removeprefix("schema.").removeprefix("schema")
    match = re.match(r"fields\[(\d+)\]\.?([a-z_]*)", field)
    if match:
        return match[2] or "name", int(match[1])
    return field or "schema", None


def _check(form: dict, rows: list[dict]) -> WorkflowError | None:
    """The refusal a save of this form would get (the validator of ``check_create_task_kind``,
    which writes nothing), or None."""
    try:
        validate_task_kind(
            slug=form["slug"].strip(), name=form["name"].strip(), scorer_id=form["scorer_id"],
            schema=schema_from_form(form, rows),
        )  # fmt: skip
    except WorkflowError as error:
        return error
    return None


@login_required
@require_http_methods(["POST"])
def task_kind_check(request):
    """A dry run of the save (``kind_editor.js`` calls it before submitting): always 200,
    with what the save would refuse and which input of the form it names (``row`` is the
    row's place on the form), so a refused save never reaches the page as a 400."""
    _or_404(access.require_maintainer, request)
    form = {k: request.POST.get(k, "") for k in KEYS}
    rows = form_rows(request.POST)
    error = _check(form, rows)
    if error is None:
        return JsonResponse({"ok": True})
    part, row = _error_target(error.field)
    posted = rows[row]["posted"] if row is not None and row < len(rows) else None
    message = f"Field {posted + 1}: {error.message}" if posted is not None else error.message
    return JsonResponse({"ok": False, "error": message, "field": error.field, "part": part, "row": posted})


@login_required
@require_http_methods(["GET", "POST"])
def task_kinds(request):
    """The kinds that exist and the editor; POST creates a kind (as the API does)."""
    _or_404(access.require_maintainer, request)
    if request.method == "GET":
        form, rows, copied = _starting_point(request.GET.get("from"))
        created = TaskKind.objects.filter(slug=request.GET.get("created", "")).values_list("slug", flat=True).first()
        context = _context(form, rows, created=created, copied=copied if request.GET.get("from") else None)
        return render(request, "frontend/taskkinds/editor.html", context)
    form = {k: request.POST.get(k, "") for k in KEYS}
    rows = form_rows(request.POST)
    try:
        kind = check_create_task_kind(
            actor=request.user, slug=form["slug"].strip(), name=form["name"].strip(), scorer_id=form["scorer_id"],
            schema=schema_from_form(form, rows), description=form["description"].strip(),
        )  # fmt: skip
    except WorkflowError as error:
        part, row = _error_target(error.field)
        # The form as it was posted: its blank rows stay blank rows, none are added.
        blanks = posted_row_count(request.POST) - len(rows)
        context = _context(
            form, rows, blank_rows=blanks, error=error.message, error_field=error.field, error_part=part, error_row=row
        )
        return render(request, "frontend/taskkinds/editor.html", context, status=error.status)
    return redirect(f"{reverse('task-kinds')}?created={kind.slug}")


def _context(form: dict, rows: list[dict], *, blank_rows: int = BLANK_ROWS, **extra) -> dict:
    rows = [dict(row, index=i) for i, row in enumerate(rows)]
    rows += [{"index": len(rows) + i, "required": True, "type": "enum"} for i in range(max(blank_rows, 0))]
    return {
        "kinds": [(kind, form_from_schema(kind) is not None) for kind in TaskKind.objects.order_by("name")],
        "families": family_names(),
        # What each family's form shows differently (sections), for the live preview.
        "family_ui": {family: adapter_for(family).ui() for family in family_names()},
        "scorers": _scorers(),
        "types": FORM_TYPES,
        "form": form,
        "rows": rows,
        **extra,
    }
