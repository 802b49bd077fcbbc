"""Item 12 of issue 10: the .env.example secret ``change-me`` was accepted with DEBUG off,
and without HSTS / SSL redirect / proxy-header settings ``check --deploy`` could not be
made clean."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.entry.security_checks import check_secret_key
from deploy.env import proxy_ssl_header

ROOT = Path(__file__).resolve().parents[2]


def documented_production_env() -> dict[str, str]:
    text = (ROOT / "docs" / "deploy.md").read_text()
    [block] = re.findall(r"```env\n(.*?)```", text, re.DOTALL)
    return dict(line.split("=", 1) for line in block.splitlines() if line.strip())


@pytest.mark.parametrize(
    "secret",
    ["", "change-me", "test-only-secret", "insecure-local-only-key", "django-insecure-" + "x" * 40, "s" * 31,
     "abab" * 20],
)  # fmt: skip
def test_a_weak_secret_key_is_an_error_with_debug_off(secret, settings):
    settings.DEBUG = False
    settings.SECRET_KEY = secret
    [error] = check_secret_key(None)
    assert error.id == "annotator.E020" and error.is_serious()
    assert "DJANGO_SECRET_KEY" in error.msg


def test_a_random_secret_like_run_demo_makes_passes(settings):
    settings.DEBUG = False
    settings.SECRET_KEY = secrets.token_urlsafe(50)
    assert check_secret_key(None) == []


def test_debug_mode_may_use_the_local_fallback(settings):
    settings.DEBUG = True
    settings.SECRET_KEY = "insecure-local-only-key"
    assert check_secret_key(None) == []


def manage(args: list[str], env: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_URL"))}
    full = {**base, "DJANGO_SETTINGS_MODULE": "deploy.settings", "FRAMELEDGER_VAR_DIR": str(tmp_path), **env}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full, capture_output=True, text=True)


def test_check_refuses_the_env_example_secret(tmp_path):
    result = manage(["check"], {"DJANGO_SECRET_KEY": "change-me", "DJANGO_DEBUG": "0"}, tmp_path)
    assert result.returncode != 0
    assert "annotator.E020" in result.stderr


def test_check_deploy_refuses_the_secret_printed_in_the_docs(tmp_path, settings):
    env = documented_production_env()
    result = manage(["check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert result.returncode != 0 and "annotator.E020" in result.stderr
    # The example printed there before counts as published too.
    settings.DEBUG = False
    settings.SECRET_KEY = "pZ3n0o8v2Yc4sQe1Lk7Wm9Ht5Rb6Xa0Ud3Fg8Jj2Nq4Ts7Vw1Yz5Cx"
    [error] = check_secret_key(None)
    assert error.id == "annotator.E020" and "published" in error.msg


def test_check_deploy_is_clean_with_the_documented_production_env(tmp_path):
    env = {**documented_production_env(), "DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}
    assert env["DJANGO_DEBUG"] == "0"
    result = manage(["check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_the_https_settings(tmp_path):
    env = {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50), "DJANGO_DEBUG": "0"}
    result = manage(["check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_the_proxy_header_setting_is_parsed_and_checked():
    assert proxy_ssl_header("X-Forwarded-Proto:https") == ("HTTP_X_FORWARDED_PROTO", "https")
    assert proxy_ssl_header("") is None
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="HEADER:VALUE"):
        proxy_ssl_header("X-Forwarded-Proto")


def test_the_embedded_server_runs_the_checks_and_does_not_start_on_a_weak_secret(tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_URL"))}
    env = {**base, "DJANGO_SETTINGS_MODULE": "deploy.settings", "FRAMELEDGER_VAR_DIR": str(tmp_path)}
    env.update({"DJANGO_SECRET_KEY": "change-me", "DJANGO_DEBUG": "0"})
    command = [sys.executable, "-m", "deploy.serve", "-b", "127.0.0.1", "-p", "0"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "annotator.E020" in result.stderr
