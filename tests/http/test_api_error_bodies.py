"""Item 13 of issue 10: some 400/500 bodies on API routes were HTML, and the schema left
out status codes, request bodies, media types, and called the audit log an object."""

from __future__ import annotations

import pytest
from django.test import Client

from annotator.entry.api import views
from tests.factories import client_for


def assert_json_error(response, status: int, code: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == code


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404_and_pages_keep_html(maintainer):
    client = client_for(maintainer)
    assert_json_error(client.get("/api/no-such-thing/"), 404, "not_found")
    assert_json_error(client.get("/api/packets/abc/"), 404, "not_found")
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_an_uncaught_error_on_an_api_route_is_a_json_500(maintainer, monkeypatch):
    def broken(self, request):
        raise RuntimeError("boom")

    monkeypatch.setattr(views.MeView, "get", broken)
    client = client_for(maintainer)
    client.raise_request_exception = False
    response = client.get("/api/me/")
    assert_json_error(response, 500, "server_error")
    assert "boom" not in response.content.decode() and "Traceback" not in response.content.decode()


def test_a_request_django_refuses_on_an_api_route_is_a_json_400():
    response = Client(HTTP_HOST="evil.example").get("/api/me/")
    assert_json_error(response, 400, "invalid")


@pytest.mark.django_db
def test_a_method_the_route_lacks_is_a_json_405(maintainer):
    assert_json_error(client_for(maintainer).delete("/api/me/"), 405, "method_not_allowed")


@pytest.fixture
def schema(maintainer):
    response = client_for(maintainer).get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def responses(schema, path, method="get"):
    return schema["paths"][path][method]["responses"]


def test_the_audit_log_is_documented_as_a_list(schema):
    body = responses(schema, "/api/packets/{packet_id}/audit/")["200"]["content"]["application/json"]["schema"]
    assert body["type"] == "array"


def test_file_routes_document_their_media_types(schema):
    def media(path):
        return set(responses(schema, path)["200"]["content"])

    assert media("/api/versions/{version_id}/leaderboard.csv") == {"text/csv"}
    assert media("/api/versions/{version_id}/export/") == {"application/zip", "application/octet-stream"}
    assert media("/api/submissions/{submission_id}/content/") == {"application/octet-stream"}


def test_every_operation_documents_its_errors_with_the_json_error_body(schema):
    error_ref = "#/components/schemas/Error"
    assert schema["components"]["schemas"]["Error"]["required"] == ["error"]
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            codes = set(operation["responses"])
            label = f"{method.upper()} {path}"
            for code, response in operation["responses"].items():
                if code.startswith(("4", "5")):
                    assert response["content"]["application/json"]["schema"]["$ref"] == error_ref, label
            if path != "/api/auth/token/":
                assert "403" in codes, label
            if method in {"post", "put", "patch"}:
                assert {"400", "413", "415"} <= codes, label
                assert operation["requestBody"]["content"], label
    assert {"400", "429"} <= set(responses(schema, "/api/auth/token/", "post"))
    assert "412" in responses(schema, "/api/packets/{packet_id}/ledger/events/", "post")
    assert "409" in responses(schema, "/api/packets/{packet_id}/ledger/freeze/", "post")
    token_body = schema["paths"]["/api/auth/token/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert token_body["required"] == ["username", "password"]
    upload = schema["paths"]["/api/videos/"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload
