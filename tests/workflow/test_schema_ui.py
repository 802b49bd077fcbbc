"""What the browser shows differently per family reaches it inside the schema the API
sends (``schema.ui``, from the family's adapter): the packet parameters the pages ask
for, the form's sections, an event's one-line summary and the form's warnings. The
stored schema, and so every hash over it, stays as it was."""

from __future__ import annotations

import pytest

from annotator.base.builtin_kinds import BUILTIN_KINDS
from annotator.models import TaskKind
from scoring import tennis_vocabulary
from tests.factories import client_for, ensure_builtin_rows, make_packet

pytestmark = pytest.mark.django_db

STORED = {kind["slug"]: kind["schema"] for kind in BUILTIN_KINDS}


def test_each_kind_the_api_lists_carries_its_familys_ui_beside_the_stored_schema(maintainer, annotator_a):
    ensure_builtin_rows()
    kinds = {k["slug"]: k["schema"] for k in client_for(annotator_a).get("/api/task-kinds/").json()}
    for slug, stored in STORED.items():
        ui = kinds[slug].pop("ui")
        assert kinds[slug] == stored, slug  # otherwise the body is the stored schema
        assert set(ui) <= {"asks", "sections", "summary", "checks"}, slug
    assert client_for(annotator_a).get("/api/task-kinds/action-ledger/").json()["schema"]["ui"] == {"asks": []}
    moments = client_for(annotator_a).get("/api/task-kinds/moment-queries/").json()["schema"]["ui"]
    assert moments == {"asks": ["grid"]}
    tennis = client_for(annotator_a).get("/api/task-kinds/break-point-ledger/").json()["schema"]["ui"]
    assert tennis["asks"] == ["players"]
    titles = [title for title, _ in tennis["sections"]]
    assert titles == ["Score", "Serve and outcome", "Last shot", "Shots", "In the video"]
    sectioned = [name for _, names in tennis["sections"] for name in names]
    assert sorted(sectioned) == sorted(f["name"] for f in STORED["break-point-ledger"]["fields"])
    assert tennis["summary"][3] == {"text": "{server|surname} serves"}
    (check,) = tennis["checks"]
    assert check["rule"] == "point_ending" and check["clean"] == list(tennis_vocabulary.CLEAN_RESULTS)
    assert (check["single"], check["no_error"]) == (["ace", "unreturnable"], "none")


def test_a_packets_schema_has_the_ui_and_its_parameters_while_the_stored_schema_has_no_ui(
    maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger",
        parameters={"players": ["Carlos Alcaraz", "Jannik Sinner"]},
    )  # fmt: skip
    schema = client_for(annotator_a).get(f"/api/packets/{packet.pk}/").json()["task_kind"]["schema"]
    assert schema["ui"]["asks"] == ["players"] and schema["ui"]["checks"][0]["rule"] == "point_ending"
    assert next(f for f in schema["fields"] if f["name"] == "server")["choices"] == ["Carlos Alcaraz", "Jannik Sinner"]
    assert "ui" not in TaskKind.objects.get(slug="break-point-ledger").schema


def test_a_new_kind_gets_the_ui_of_its_family_and_is_stored_as_posted(maintainer):
    schema = {
        "family": "moments", "root_key": "queries",
        "fields": [{"name": "query_id", "type": "string"}, {"name": "intervals", "type": "interval_list"}],
        "identity_fields": ["query_id"], "boundary_fields": [], "tolerance": 0, "sort_keys": ["query_id"],
    }  # fmt: skip
    body = {"slug": "clips", "name": "Clips", "scorer_id": "moment-utility-v1", "schema": schema}
    created = client_for(maintainer).post("/api/task-kinds/", body, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["schema"] == {**schema, "ui": {"asks": ["grid"]}}
    assert TaskKind.objects.get(slug="clips").schema == schema


def test_the_project_page_shows_the_fields_of_the_parameters_a_kind_asks_for(maintainer):
    ensure_builtin_rows()
    page = client_for(maintainer).get("/projects/").content.decode()
    assert '<option value="break-point-ledger" data-asks="players"' in page
    assert '<option value="moment-queries" data-asks="grid"' in page
    assert '<option value="action-ledger" data-asks=""' in page
    assert 'data-parameter="players" id="project-players"' in page and 'data-parameter="grid" id="project-grid"' in page
