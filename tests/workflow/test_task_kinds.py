"""A maintainer defines a new task kind without code; bad schemas are refused."""

from __future__ import annotations

import pytest

from annotator.models import TaskKind
from annotator.models.taskkind_schema import EventInvalid, validate_event
from tests.factories import client_for, make_packet

SWIM_KIND = {
    "slug": "swim-turns",
    "name": "Swimming turns",
    "scorer_id": "egocentric-f1-v2",
    "schema": {
        "family": "actions",
        "root_key": "actions",
        "fields": [
            {"name": "verb", "type": "enum", "choices": ["flip_turn", "open_turn"]},
            {"name": "nouns", "type": "enum_set", "choices": ["wall", "lane_rope"]},
            {"name": "start_frame", "type": "int", "frame": True},
            {"name": "end_frame", "type": "int", "frame": True},
        ],
        "boundary_fields": ["start_frame", "end_frame"],
        "tolerance": 5,
        "sort_keys": ["start_frame"],
    },
}


@pytest.mark.django_db
def test_a_maintainer_defines_a_kind_and_packets_use_it(maintainer, annotator_a, annotator_b, adjudicator):
    response = client_for(maintainer).post("/api/task-kinds/", SWIM_KIND, format="json")
    assert response.status_code == 201, response.content
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="swim-turns")
    good = {"verb": "flip_turn", "nouns": ["wall"], "start_frame": 1, "end_frame": 9}
    created = client_for(annotator_a).post(
        f"/api/packets/{packet.pk}/ledger/events/", {"data": good, "version": 0}, format="json"
    )
    assert created.status_code == 201
    refused = client_for(annotator_a).post(
        f"/api/packets/{packet.pk}/ledger/events/", {"data": {**good, "verb": "take"}, "version": 1}, format="json"
    )
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "verb"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"scorer_id": "moment-utility-v1"}, "scorer_id", "does not grade"),
        ({"schema": {**SWIM_KIND["schema"], "family": "juggling"}}, "schema.family", "family"),
        ({"schema": {**SWIM_KIND["schema"], "fields": []}}, "schema.fields", "fields"),
        (
            {"schema": {**SWIM_KIND["schema"], "boundary_fields": ["start_frame"]}},
            "schema.boundary_fields",
            "exactly a start",
        ),
        (
            {
                "schema": {
                    **SWIM_KIND["schema"],
                    "fields": [SWIM_KIND["schema"]["fields"][0], {"name": "nouns", "type": "enum_set", "choices": []}],
                }
            },
            "schema.fields[1].choices",
            "field nouns: choices",
        ),
        ({"schema": {**SWIM_KIND["schema"], "tolerance": -1}}, "schema.tolerance", "non-negative"),
        ({"slug": "action-ledger"}, "slug", "exists already"),
    ],
)
def test_bad_task_kinds_are_refused(maintainer, change, field, message):
    response = client_for(maintainer).post("/api/task-kinds/", {**SWIM_KIND, **change}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field and message in response.json()["error"]["message"]
    assert not TaskKind.objects.filter(slug="swim-turns").exists()


@pytest.mark.django_db
def test_only_maintainers_define_kinds(annotator_a):
    assert client_for(annotator_a).post("/api/task-kinds/", SWIM_KIND, format="json").status_code == 404


def test_break_point_shot_tokens_follow_the_serve_rule():
    from annotator.base.builtin_kinds import BREAK_POINT_LEDGER

    event = {
        "set": 1, "medvedev_games": 0, "de_minaur_games": 0, "medvedev_points": "0", "de_minaur_points": "40",
        "server": "Daniil Medvedev", "opportunity": 1, "first_serve_in": True, "outcome": "saved",
        "serve_direction": "wide", "rally_shots": 1, "terminal_player": "Daniil Medvedev",
        "terminal_stroke": "serve", "terminal_court_position": "serve", "terminal_result": "ace",
        "terminal_error": "none", "shots": [{"stroke": "serve", "direction": "wide"}],
    }  # fmt: skip
    assert validate_event(BREAK_POINT_LEDGER, event)["shots"] == [{"stroke": "serve", "direction": "wide"}]
    with pytest.raises(EventInvalid) as error:
        validate_event(
            BREAK_POINT_LEDGER, {**event, "shots": [{"stroke": "forehand_groundstroke", "direction": "wide"}]}
        )
    assert error.value.field == "shots[0].stroke"
    with pytest.raises(EventInvalid) as error:
        validate_event(
            BREAK_POINT_LEDGER, {**event, "shots": [*event["shots"], {"stroke": "overhead", "direction": "wide"}]}
        )
    assert error.value.field == "shots[1].direction"
