"""Ids in URLs are bounded: a number no database column can hold is a 404, never a 500.

With Django's ``<int:…>`` a 20-digit id reached the view and the driver failed on it
(SQLite ``OverflowError``, PostgreSQL ``integer out of range``): the schemathesis pass found
it on ``POST /api/packets/<id>/ledger/events/`` as an annotator once it drew large integers.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter

from annotator.base.urlconverters import IdConverter
from annotator.entry.routing import websocket_urlpatterns
from tests.factories import client_for

TOO_BIG = "9" * 20  # over 2**63
LARGEST = "9" * 18  # the largest id the converter accepts; no such row exists


def walk(patterns, prefix=""):
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route, entry.pattern.converters


def test_every_integer_in_a_route_uses_the_bounded_id_converter():
    routes = list(walk(get_resolver().url_patterns)) + list(walk(websocket_urlpatterns))
    with_ids = [(route, converters) for route, converters in routes if converters]
    assert len(with_ids) > 30
    for route, converters in with_ids:
        for name, converter in converters.items():
            assert not isinstance(converter, IntConverter), f"{route}: <int:{name}> is unbounded; use <id:{name}>"
    assert any(isinstance(c, IdConverter) for _, converters in with_ids for c in converters.values())


@pytest.mark.django_db
@pytest.mark.parametrize("number", [TOO_BIG, LARGEST])
def test_an_id_no_column_can_hold_is_a_json_404_on_reads_and_writes(number, packet, annotator_a, maintainer):
    annotator = client_for(annotator_a)
    answers = [
        annotator.get(f"/api/packets/{number}/"),
        annotator.post(f"/api/packets/{number}/ledger/events/", {"start_frame": 1}, format="json"),
        client_for(maintainer).get(f"/api/versions/{number}/export/"),
        client_for(maintainer).get(f"/api/videos/{number}/"),
    ]
    for response in answers:
        assert response.status_code == 404, response.content
        assert response.json()["error"]["code"] == "not_found"
    page = annotator.get(f"/packets/{number}/")
    assert page.status_code == 404


@pytest.mark.django_db
def test_the_schema_gives_id_parameters_their_bounds(maintainer):
    schema = client_for(maintainer).get("/api/schema/?format=json").json()
    parameters = schema["paths"]["/api/packets/{packet_id}/"]["get"]["parameters"]
    (packet_id,) = [p for p in parameters if p["name"] == "packet_id"]
    assert packet_id["schema"] == {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}


@pytest.mark.django_db
def test_ids_in_bodies_are_bounded_like_ids_in_urls(packet, maintainer):
    # Was a 500 (OverflowError in annotator/entry/api/grading.py) with a 20-digit submission id.
    from annotator.actions.grading import do_mark_version_ready
    from annotator.actions.versions import do_import_provisional_version

    labels = [{"verb": "take", "nouns": ["cup"], "start_frame": 90, "end_frame": 210}]
    version = do_import_provisional_version(packet, labels, actor=maintainer, source="t", source_sha256="0" * 64)
    do_mark_version_ready(version, actor=maintainer)
    client = client_for(maintainer)
    huge = int(TOO_BIG)
    answers = {
        "submissions": client.post(
            f"/api/packets/{packet.pk}/scoring-runs/", {"tier": "provisional", "submissions": [huge]}, format="json"
        ),
        "version": client.post(f"/api/packets/{packet.pk}/scoring-runs/", {"version": huge}, format="json"),
        "video": client.post(
            "/api/packets/",
            {
                "video": huge,
                "task_kind": "action-ledger",
                "title": "t",
                "annotator_a": "a",
                "annotator_b": "b",
                "adjudicator": "c",
            },
            format="json",
        ),  # fmt: skip
    }
    for field, response in answers.items():
        assert response.status_code in (400, 404), (field, response.content)
        assert response.json()["error"]["code"] in ("invalid", "not_found"), (field, response.content)
