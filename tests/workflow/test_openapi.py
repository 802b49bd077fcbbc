"""The OpenAPI schema documents every API route."""

from __future__ import annotations

import re

import pytest
from django.urls import get_resolver

from tests.factories import client_for
from tests.workflow.test_blindness_matrix import walk


@pytest.mark.django_db
def test_the_schema_lists_every_api_route(maintainer):
    response = client_for(maintainer).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "FrameLedger API"
    documented = set(schema["paths"])
    routes = {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        for route, _ in walk(get_resolver().url_patterns)
        if route.startswith("api/") and route != "api/schema/"
    }
    assert routes - documented == set()


@pytest.mark.django_db
def test_token_auth_works_for_scripts(annotator_a, client):
    token = client.post("/api/auth/token/", {"username": "annotator_a", "password": "annotator_a-password"})
    assert token.status_code == 200
    me = client.get("/api/me/", HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    assert me.json() == {"username": "annotator_a", "is_maintainer": False}
    assert client.get("/api/me/").status_code == 403
