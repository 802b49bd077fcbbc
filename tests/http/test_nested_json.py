"""Item 4 of issue 10: ``'[' * 1000 + ']' * 1000`` gave 500 with a traceback on every JSON
endpoint, including the unauthenticated ``/api/auth/token/``. It is now a 400 with the
JSON error body, from the one JSON parser of the API."""

from __future__ import annotations

import pytest
from django.test import Client

from annotator.entry.api.parsers import json_depth
from tests.factories import client_for
from tests.workflow.test_blindness_matrix import all_routes, build_scenario, expand

DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000


def test_json_depth_counts_brackets_outside_strings():
    assert json_depth(b"{}") == 1
    assert json_depth(b'{"a": [1, {"b": []}]}') == 4
    assert json_depth(b'["[[[[[[", "\\"[[["]') == 1
    assert json_depth(DEEP.encode()) == 1000


def test_a_deeply_nested_token_request_is_a_400_not_a_500(client):
    for body in (DEEP, DEEP_OBJECT):
        response = client.post("/api/auth/token/", body, content_type="application/json")
        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        error = response.json()["error"]
        assert error["code"] == "parse_error" and "nested deeper than" in error["message"]


def test_nesting_up_to_the_limit_still_parses(maintainer, settings):
    limit = settings.FRAMELEDGER_MAX_JSON_DEPTH
    schema = {"fields": []}
    for _ in range(limit - 3):
        schema = {"x": schema}
    body = {"slug": "deep-kind", "name": "Deep", "scorer_id": "egocentric-actions", "schema": schema}
    response = client_for(maintainer).post("/api/task-kinds/", body, format="json")
    assert response.status_code != 500
    assert "nested deeper" not in response.content.decode()


@pytest.mark.django_db
def test_every_json_endpoint_answers_deep_nesting_with_a_json_400(packet, maintainer, annotator_a, adjudicator):
    users = {"maintainer": maintainer, "annotator_a": annotator_a, "annotator_b": packet.annotator_b,
             "adjudicator": adjudicator}  # fmt: skip
    scenario = build_scenario("a_frozen", packet, users)
    clients = {"anonymous": Client(), **{name: client_for(user) for name, user in users.items()}}
    parsed = 0
    for route, _ in all_routes():
        if not route.startswith("api/") or route == "api/schema/":
            continue
        for url, _ in expand(route, packet, scenario):
            for role, client in clients.items():
                for method in ("post", "put", "patch"):
                    response = getattr(client, method)("/" + url, DEEP, content_type="application/json")
                    label = f"{method.upper()} /{url} as {role}"
                    assert response.status_code < 500, label
                    if response.status_code >= 400:  # a view that reads no body may succeed
                        assert response["Content-Type"] == "application/json", label
                        assert "error" in response.json(), label
                        parsed += "nested deeper than" in response.json()["error"]["message"]
    assert parsed >= 8  # routes that read a body for someone allowed to write there
