"""The task-kind editor: maintainers only; the form goes through the API's own check,
which names the broken field; a kind made on the page equals the one the API makes."""

from __future__ import annotations

import pytest
from django.test import Client

from annotator.entry.pages.taskkinds import form_from_schema, schema_from_form
from annotator.models import AuditEntry, TaskKind
from tests.factories import client_for
from tests.workflow.test_task_kinds import SWIM_KIND


def swim_form(**change) -> dict:
    """The editor's form describing SWIM_KIND (``tests/workflow/test_task_kinds.py``)."""
    form = {
        "slug": "swim-turns-page", "name": SWIM_KIND["name"], "family": "actions", "scorer_id": "egocentric-f1-v2",
        "root_key": "actions", "tolerance": "5", "boundary_start": "start_frame", "boundary_end": "end_frame",
        "sort_keys": "start_frame", "description": "", "field_count": "6",
        "field-0-name": "verb", "field-0-type": "enum", "field-0-required": "on",
        "field-0-choices": "flip_turn\nopen_turn\n",
        "field-1-name": "nouns", "field-1-type": "enum_set", "field-1-required": "on",
        "field-1-choices": " wall\r\nlane_rope",
        "field-2-name": "start_frame", "field-2-type": "int", "field-2-required": "on", "field-2-frame": "on",
        "field-3-name": "end_frame", "field-3-type": "int", "field-3-required": "on", "field-3-frame": "on",
        "field-4-name": "", "field-4-type": "enum", "field-4-required": "on",  # blank rows are ignored
        "field-5-name": "", "field-5-type": "enum",
    }  # fmt: skip
    form.update(change)
    return form


@pytest.mark.django_db
def test_the_editor_renders_with_the_families_scorers_and_a_starter_schema(maintainer):
    response = client_for(maintainer).get("/task-kinds/")
    assert response.status_code == 200
    body = response.content.decode()
    for text in ('id="kind-form"', 'id="kind-preview"', "kind_editor.js", 'value="hierarchical-bottleneck-v1"',
                 'data-family="break_points"', 'name="field-0-choices"', "break-point-ledger"):  # fmt: skip
        assert text in body, text
    assert 'href="/task-kinds/"' in client_for(maintainer).get("/projects/").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["annotator_a", "adjudicator", "outsider"])
def test_the_editor_answers_404_to_everyone_but_maintainers(persona, request):
    client = client_for(request.getfixturevalue(persona))
    assert client.get("/task-kinds/").status_code == 404
    assert client.post("/task-kinds/", swim_form()).status_code == 404
    assert not TaskKind.objects.filter(slug="swim-turns-page").exists()
    assert Client().get("/task-kinds/").status_code == 302


@pytest.mark.django_db
def test_a_kind_made_in_the_editor_equals_the_one_the_api_makes(maintainer):
    response = client_for(maintainer).post("/task-kinds/", swim_form())
    assert response.status_code == 302 and response["Location"] == "/task-kinds/?created=swim-turns-page"
    api = client_for(maintainer).post("/api/task-kinds/", SWIM_KIND, format="json")
    assert api.status_code == 201
    page_kind, api_kind = TaskKind.objects.get(slug="swim-turns-page"), TaskKind.objects.get(slug="swim-turns")
    assert page_kind.schema == api_kind.schema == SWIM_KIND["schema"]
    assert (page_kind.scorer_id, page_kind.name) == (api_kind.scorer_id, api_kind.name)
    hashes = [e.hashes for e in AuditEntry.objects.filter(operation="create_task_kind").order_by("seq")]
    assert len(hashes) == 2 and hashes[0] == hashes[1]  # the same schema digest
    assert b'id="kind-created"' in client_for(maintainer).get(response["Location"]).content
    assert b'id="kind-created"' not in client_for(maintainer).get("/task-kinds/?created=no-such-kind").content


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"field-1-choices": "  \n"},
            "schema.fields[1].choices",
            "Field 2: field nouns: choices must be a non-empty list",
        ),
        ({"tolerance": "five"}, "schema.tolerance", "tolerance must be a non-negative integer"),
        ({"field-3-name": "start_frame"}, "schema.fields[3].name", "field names must be unique"),
        ({"boundary_end": ""}, "schema.boundary_fields", "exactly a start and an end"),
        ({"scorer_id": "moment-utility-v1"}, "scorer_id", "does not grade the actions family"),
        ({"slug": "Bad Slug"}, "slug", "a slug is 1 to 50"),
        ({"field-2-min": "zero"}, "schema.fields[2].min", "field start_frame: min must be an integer"),
    ],
)
def test_an_invalid_form_names_the_broken_field_and_creates_nothing(maintainer, change, field, message):
    response = client_for(maintainer).post("/task-kinds/", swim_form(**change))
    assert response.status_code == 400
    body = response.content.decode()
    assert f'data-field="{field}"' in body and message in body
    assert 'aria-invalid="true"' in body  # the input (or the row's input) is marked
    assert not TaskKind.objects.filter(slug__in=["swim-turns-page", "Bad Slug"]).exists()


@pytest.mark.django_db
def test_a_copy_of_a_kind_reads_back_as_the_same_schema(maintainer):
    assert client_for(maintainer).post("/api/task-kinds/", SWIM_KIND, format="json").status_code == 201
    form, rows = form_from_schema(TaskKind.objects.get(slug="swim-turns"))
    assert schema_from_form(form, rows) == SWIM_KIND["schema"]
    builtin = TaskKind.objects.get(slug="action-ledger")  # its nouns need at least one value (min_items)
    written = {key: value for key, value in builtin.schema.items() if value != []}  # an empty list is the default
    assert schema_from_form(*form_from_schema(builtin)) == written
    page = client_for(maintainer).get("/task-kinds/?from=swim-turns").content.decode()
    assert "flip_turn\nopen_turn</textarea>" in page and 'id="kind-copied"' in page
    # token lists are not edited in the form: no copy link for the tennis kind
    assert 'href="?from=break-point-ledger"' not in page and 'href="?from=action-ledger"' in page
    assert 'href="?from=moment-queries"' not in page  # its interval grid step is not on the form


@pytest.mark.django_db
def test_the_editor_sets_the_assistance_flag_only_when_ticked_and_a_copy_keeps_it(maintainer):
    client = client_for(maintainer)
    assert client.post("/task-kinds/", swim_form(slug="helped", assistance="on")).status_code == 302
    assert client.post("/task-kinds/", swim_form(slug="blind")).status_code == 302
    helped, blind = TaskKind.objects.get(slug="helped"), TaskKind.objects.get(slug="blind")
    assert helped.schema["annotator_assistance"] is True and "annotator_assistance" not in blind.schema
    assert schema_from_form(*form_from_schema(helped)) == helped.schema
    assert 'id="kind-assistance" checked' in client.get("/task-kinds/?from=helped").content.decode()
    assert 'id="kind-assistance" checked' not in client.get("/task-kinds/?from=blind").content.decode()


@pytest.mark.django_db
def test_a_row_error_marks_only_that_row_and_keeps_the_posted_rows(maintainer):
    """A duplicate field name is refused on its row: the kind's own Name input is not
    outlined, and the form comes back with the rows it was posted with (no blank row
    added per refused save)."""
    form = swim_form(**{"field-3-name": "start_frame", "field-4-name": "extra", "field-4-choices": "x"})
    for _ in range(2):
        body = client_for(maintainer).post("/task-kinds/", form).content.decode()
        assert 'id="kind-name" value="Swimming turns" placeholder="Swimming turns" >' in body  # not outlined
        marked = [line for line in body.splitlines() if 'aria-invalid="true"' in line]
        assert len(marked) == 1 and 'name="field-3-name"' in marked[0]
        assert body.count('class="field-row') == 6  # as posted: 5 rows used, 1 blank
        form = dict(form, field_count="6")


@pytest.mark.django_db
def test_the_dry_run_answers_200_with_what_a_save_would_refuse(maintainer, annotator_a):
    client = client_for(maintainer)
    # blank row 1 and row 3 (the second kept row) refused: the place on the form is named
    form = swim_form(**{"field-1-name": "", "field-1-choices": "", "field-4-name": "verb", "field-4-choices": "a"})
    answer = client.post("/task-kinds/check/", form)
    assert answer.status_code == 200
    assert answer.json() == {
        "ok": False, "error": "Field 5: field verb: field names must be unique", "field": "schema.fields[3].name",
        "part": "name", "row": 4,
    }  # fmt: skip
    assert client.post("/task-kinds/check/", swim_form(tolerance="x")).json()["part"] == "tolerance"
    assert client.post("/task-kinds/check/", swim_form()).json() == {"ok": True}
    assert not TaskKind.objects.filter(slug="swim-turns-page").exists()  # a dry run writes nothing
    assert client_for(annotator_a).post("/task-kinds/check/", swim_form()).status_code == 404
