"""Item 6 of issue 10: API tokens never expired and were stored in plain text. Only a
SHA-256 digest is stored now, the token is shown once, and it expires."""

from __future__ import annotations

import importlib
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotator.models import ApiToken
from annotator.models.tokens import token_digest


def get_token(client, username="annotator_a"):
    response = client.post(
        "/api/auth/token/", {"username": username, "password": f"{username}-password"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_tokens_are_stored_only_as_a_digest(annotator_a, client):
    body = get_token(client)
    token = body["token"]
    row = ApiToken.objects.get(user=annotator_a)
    assert row.digest == token_digest(token) and token not in row.digest
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM annotator_apitoken")
        stored = " ".join(str(value) for row in cursor.fetchall() for value in row)
    assert token not in stored
    me = client.get("/api/me/", HTTP_AUTHORIZATION=f"Token {token}")
    assert me.json() == {"username": "annotator_a", "is_maintainer": False}


@pytest.mark.django_db
def test_tokens_expire(annotator_a, settings):
    token = get_token(Client())["token"]
    row = ApiToken.objects.get(user=annotator_a)
    ttl = (row.expires_at - row.created_at).total_seconds()
    assert ttl == settings.FRAMELEDGER_TOKEN_TTL_SECONDS
    ApiToken.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expired = Client().get("/api/me/", HTTP_AUTHORIZATION=f"Token {token}")
    assert expired.status_code in {401, 403}
    assert "expired" in expired.json()["error"]["message"]


@pytest.mark.django_db
def test_a_wrong_token_and_wrong_password_are_json_errors(annotator_a, client):
    assert client.get("/api/me/", HTTP_AUTHORIZATION="Token nope").json()["error"]["message"] == "Invalid token."
    bad = client.post(
        "/api/auth/token/", {"username": "annotator_a", "password": "wrong"}, content_type="application/json"
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"
    assert not ApiToken.objects.exists()


@pytest.mark.django_db
def test_plain_drf_tokens_are_hashed_by_the_migration(annotator_a):
    from types import SimpleNamespace

    from django.apps import apps

    [path] = Path(apps.get_app_config("annotator").path, "migrations").glob("*_http_hardening.py")
    migration = importlib.import_module(f"annotator.migrations.{path.stem}")
    key = "a" * 40
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, user_id integer, created timestamp)")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)", [key, annotator_a.pk, timezone.now()])
    migration.hash_plain_tokens(apps, SimpleNamespace(connection=connection))
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone()[0] == 0
        cursor.execute("DROP TABLE authtoken_token")
    row = ApiToken.objects.get(user=annotator_a)
    assert row.digest == token_digest(key)
    # A later migration of the chain binds each token to its owner's current password.
    [later] = Path(apps.get_app_config("annotator").path, "migrations").glob("*_api_token_credentials.py")
    importlib.import_module(f"annotator.migrations.{later.stem}").fill_credentials(apps, None)
    assert Client().get("/api/me/", HTTP_AUTHORIZATION=f"Token {key}").json()["username"] == "annotator_a"
