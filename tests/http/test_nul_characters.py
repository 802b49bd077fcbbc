"""NUL characters in request text are a clear 400 on both databases, never a 500.

PostgreSQL cannot store NUL in text (``DataError``); SQLite stores it, so the SQLite pass
never saw these 500s. Each request below carries ``\\u0000`` in one text field: a JSON body
(the anonymous token endpoint included), a form body of a page, a query string."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from annotator.models import AuditEntry, LedgerEvent, Project, TaskKind
from tests.factories import client_for

pytestmark = pytest.mark.django_db

NUL = "\u0000"


def assert_nul_refused(response, field: str) -> None:
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "invalid", error
    assert error["field"] == field and "NUL" in error["message"], error


def test_anonymous_token_request_with_nul_is_a_400():
    from rest_framework.test import APIClient

    response = APIClient().post("/api/auth/token/", {"username": f"pg{NUL}maint", "password": "x"}, format="json")
    assert_nul_refused(response, "username")


def test_json_bodies_with_nul_are_a_400(packet, annotator_a, maintainer):
    annotator = client_for(annotator_a)
    event = {"verb": "take", "nouns": ["cup"], "start_frame": 1, "end_frame": 9, "note": f"a{NUL}b"}
    response = annotator.post(f"/api/packets/{packet.pk}/ledger/events/", {"data": event, "version": 0}, "json")
    assert_nul_refused(response, "data")
    response = annotator.post(
        f"/api/packets/{packet.pk}/ledger/freeze/", {"attestation": f"I labelled{NUL} it alone.", "version": 0}, "json"
    )
    assert_nul_refused(response, "attestation")
    response = client_for(maintainer).post(
        "/api/task-kinds/", {"slug": "k", "name": f"n{NUL}", "scorer_id": "x", "schema": {}}, format="json"
    )
    assert_nul_refused(response, "name")
    response = client_for(maintainer).post("/api/packets/", {f"ti{NUL}tle": "x"}, format="json")
    assert_nul_refused(response, "ti\\u0000tle")
    assert not LedgerEvent.objects.exists()


def form(client, url: str, data: dict):
    """A page's form, posted as browsers post it (url-encoded)."""
    return client.post(url, urlencode(data), content_type="application/x-www-form-urlencoded")


def test_form_bodies_and_query_strings_with_nul_are_a_400(maintainer):
    client = client_for(maintainer)
    before = (AuditEntry.objects.count(), Project.objects.count(), TaskKind.objects.count())
    assert_nul_refused(form(client, "/people/", {"username": "newperson", "email": f"a{NUL}@b.org"}), "email")
    assert_nul_refused(form(client, "/projects/", {"title": f"t{NUL}", "task_kind": "action-ledger"}), "title")
    assert_nul_refused(form(client, "/task-kinds/", {"name": f"n{NUL}", "description": "d"}), "name")
    assert_nul_refused(client.get("/audit/?operation=a%00b"), "operation")
    assert_nul_refused(client.get("/api/packets/?x%00=1"), "x\\u0000")
    assert (AuditEntry.objects.count(), Project.objects.count(), TaskKind.objects.count()) == before
    assert client.get("/audit/?operation=a").status_code == 200
