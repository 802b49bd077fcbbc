"""Item 6 of issue 10: no brute-force limit on /login/, /admin/login/ or /api/auth/token/.
Failures are now counted per address and per account-and-address in the cache, with a
lock-out (the account's owner elsewhere: tests/http/test_sign_in_throttling_victim.py)."""

from __future__ import annotations

import os
import uuid

import pytest
from django.test import Client

from annotator.base import login_guard
from deploy.cache import JSONFileCache

WRONG = "not-the-password"


@pytest.fixture
def limits(settings):
    settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER = 3
    settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP = 5
    return settings


def sign_in(client, route, username, password, address="10.0.0.1"):
    data = {"username": username, "password": password}
    if route == "/api/auth/token/":
        return client.post(route, data, content_type="application/json", REMOTE_ADDR=address)
    return client.post(route, data, REMOTE_ADDR=address)


SUCCESS = {"/login/": 302, "/admin/login/": 302, "/api/auth/token/": 200}


@pytest.mark.django_db
@pytest.mark.parametrize("route", ["/login/", "/admin/login/", "/api/auth/token/"])
def test_brute_force_on_a_username_is_locked_out_even_with_the_right_password(route, limits, maintainer):
    client = Client()
    for _ in range(3):
        assert sign_in(client, route, "maintainer", WRONG).status_code in {200, 400}
    locked = sign_in(client, route, "maintainer", "maintainer-password")
    assert locked.status_code == 429
    assert 0 < int(locked["Retry-After"]) <= limits.FRAMELEDGER_LOGIN_LOCKOUT_SECONDS
    if route == "/api/auth/token/":
        assert locked.json()["error"]["code"] == "locked_out"
    # Another username from another address is not affected.
    assert sign_in(Client(), route, "outsider-x", WRONG, address="10.0.0.2").status_code in {200, 400}


@pytest.mark.django_db
def test_one_address_trying_many_usernames_is_locked_out(limits, annotator_a):
    client = Client()
    for number in range(5):
        assert sign_in(client, "/login/", f"guess-{number}", WRONG).status_code == 200
    assert sign_in(client, "/login/", "annotator_a", "annotator_a-password").status_code == 429
    assert sign_in(client, "/api/auth/token/", "annotator_a", "annotator_a-password").status_code == 429
    other = sign_in(Client(), "/login/", "annotator_a", "annotator_a-password", address="10.0.0.9")
    assert other.status_code == 302


@pytest.mark.django_db
def test_a_success_clears_the_username_count(limits, annotator_a):
    client = Client()
    for _ in range(2):
        sign_in(client, "/login/", "annotator_a", WRONG)
    assert sign_in(client, "/login/", "annotator_a", "annotator_a-password").status_code == 302
    for _ in range(2):
        assert sign_in(Client(), "/login/", "annotator_a", WRONG).status_code == 200
    assert sign_in(Client(), "/login/", "annotator_a", "annotator_a-password").status_code == 302


@pytest.mark.django_db
def test_the_lock_out_ends_after_its_window(limits, annotator_a):
    limits.FRAMELEDGER_LOGIN_LOCKOUT_SECONDS = 1
    for _ in range(3):
        sign_in(Client(), "/login/", "annotator_a", WRONG)
    assert sign_in(Client(), "/login/", "annotator_a", "annotator_a-password").status_code == 429
    import time

    time.sleep(1.2)
    assert sign_in(Client(), "/login/", "annotator_a", "annotator_a-password").status_code == 302


def shared_cache_pair(kind: str, tmp_path):
    """Two cache clients on one store, as two server processes would have."""
    if kind == "file":
        return [JSONFileCache(str(tmp_path / "cache"), {}) for _ in range(2)]
    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.skip("REDIS_URL not set")
    from django.core.cache.backends.redis import RedisCache

    prefix = f"test-{uuid.uuid4().hex}"
    options = {"serializer": "deploy.cache.JSONSerializer"}
    return [RedisCache(url, {"KEY_PREFIX": prefix, "OPTIONS": options}) for _ in range(2)]


@pytest.mark.parametrize("kind", ["file", "redis"])
def test_failure_counts_are_shared_between_processes(kind, limits, tmp_path, monkeypatch):
    first, second = shared_cache_pair(kind, tmp_path)
    caches_in_turn = iter([first, second] * 10)
    monkeypatch.setattr(login_guard, "_cache", lambda: next(caches_in_turn))
    for _ in range(3):
        login_guard.record_failure("10.1.1.1", "someone")
    assert login_guard.locked_for("10.1.1.1", "someone") > 0  # the pair, read by the other process
    for cache in (first, second):
        cache.clear() if kind == "file" else cache.delete_many([])


def test_the_settings_pick_redis_or_a_file_cache(monkeypatch, tmp_path):
    import subprocess
    import sys

    code = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "deploy.settings", "DJANGO_SECRET_KEY": "x" * 50}
    env.pop("REDIS_URL", None)
    env["FRAMELEDGER_VAR_DIR"] = str(tmp_path)
    run = [sys.executable, "-c", "import django; django.setup(); " + code]
    assert subprocess.check_output(run, env=env, text=True).strip() == "deploy.cache.JSONFileCache"
    env["REDIS_URL"] = "redis://127.0.0.1:6379/4"
    assert subprocess.check_output(run, env=env, text=True).strip().endswith("RedisCache")
