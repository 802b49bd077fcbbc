"""Settings helpers fail loudly; URLs select the real components."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from deploy.env import envbool, envint, envlist, envstr
from deploy.settings import database_from_url


def test_envbool_refuses_a_typo(monkeypatch):
    monkeypatch.setenv("FL_FLAG", "ture")
    with pytest.raises(ImproperlyConfigured, match="FL_FLAG='ture' is not a boolean"):
        envbool("FL_FLAG")
    monkeypatch.setenv("FL_FLAG", "Yes")
    assert envbool("FL_FLAG") is True


def test_envint_refuses_a_non_integer(monkeypatch):
    monkeypatch.setenv("FL_N", "12x")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        envint("FL_N", 1)
    monkeypatch.delenv("FL_N")
    assert envint("FL_N", 7) == 7


def test_a_required_string_without_default_fails(monkeypatch):
    monkeypatch.delenv("FL_SECRET", raising=False)
    with pytest.raises(ImproperlyConfigured, match="FL_SECRET is required"):
        envstr("FL_SECRET")


def test_secrets_can_come_from_a_file(monkeypatch, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    monkeypatch.setenv("FL_SECRET_FILE", str(secret))
    assert envstr("FL_SECRET") == "s3cret"
    monkeypatch.setenv("FL_SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        envstr("FL_SECRET")


def test_envlist_splits_on_commas(monkeypatch):
    monkeypatch.setenv("FL_HOSTS", "a.example, b.example,,")
    assert envlist("FL_HOSTS", []) == ["a.example", "b.example"]


def test_database_urls_translate():
    pg = database_from_url("postgres://user:p%40ss@127.0.0.1:5432/frameledger")
    assert (pg["ENGINE"], pg["NAME"], pg["USER"], pg["PASSWORD"], pg["PORT"]) == (
        "django.db.backends.postgresql", "frameledger", "user", "p@ss", "5432",
    )  # fmt: skip
    assert database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"
    with pytest.raises(ImproperlyConfigured, match="mysql"):
        database_from_url("mysql://x/y")


def test_debug_is_off_and_hosts_are_explicit_by_default():
    from django.conf import settings

    assert settings.DEBUG is False
    assert "*" not in settings.ALLOWED_HOSTS
