"""Sign-in throttling an attacker cannot turn on the account's owner: wrong passwords from
one address lock that address (or that account from that address), never the account
everywhere; a guessing attack spread over many addresses puts the account on a slow path
(one attempt every few seconds from unknown addresses), not a lock-out, and addresses the
owner signed in from go on as usual (``annotator/base/login_guard.py``)."""

from __future__ import annotations

import time

import pytest
from django.test import Client

WRONG = "not-the-password"
ROUTES = ["/login/", "/api/auth/token/"]
SUCCESS = {"/login/": 302, "/api/auth/token/": 200}


@pytest.fixture
def limits(settings):
    settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER = 3
    settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP = 1000
    settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_ACCOUNT = 6
    settings.FRAMELEDGER_LOGIN_SLOW_SECONDS = 2
    return settings


def sign_in(route, username, password, address):
    data = {"username": username, "password": password}
    if route == "/api/auth/token/":
        return Client().post(route, data, content_type="application/json", REMOTE_ADDR=address)
    return Client().post(route, data, REMOTE_ADDR=address)


@pytest.mark.django_db
@pytest.mark.parametrize("route", ROUTES)
def test_wrong_passwords_from_one_address_do_not_lock_the_owner_out_elsewhere(route, limits, adjudicator):
    for _ in range(5):
        sign_in(route, "adjudicator", WRONG, "10.6.6.6")
    assert sign_in(route, "adjudicator", "adjudicator-password", "10.6.6.6").status_code == 429
    owner = sign_in(route, "adjudicator", "adjudicator-password", "10.0.0.7")
    assert owner.status_code == SUCCESS[route], owner.content[:200]


@pytest.mark.django_db
def test_an_attack_over_many_addresses_slows_unknown_addresses_and_never_the_owners(limits, adjudicator):
    assert sign_in("/login/", "adjudicator", "adjudicator-password", "10.0.0.7").status_code == 302  # known
    for number in range(6):  # two failures from each of three addresses: no pair is locked
        sign_in("/login/", "adjudicator", WRONG, f"10.6.6.{number // 2}")
    # The owner, from an address the account knows: as usual, right away, every time.
    for _ in range(3):
        assert sign_in("/login/", "adjudicator", "adjudicator-password", "10.0.0.7").status_code == 302
    # From unknown addresses: one attempt per slow period for the account, then a wait, not a lock-out.
    first = sign_in("/api/auth/token/", "adjudicator", "adjudicator-password", "10.0.0.8")
    assert first.status_code == 200, first.content[:200]
    waiting = sign_in("/api/auth/token/", "adjudicator", "adjudicator-password", "10.0.0.9")
    assert waiting.status_code == 429 and 0 < int(waiting["Retry-After"]) <= limits.FRAMELEDGER_LOGIN_SLOW_SECONDS
    deadline = time.monotonic() + 10
    while sign_in("/login/", "adjudicator", "adjudicator-password", "10.0.0.9").status_code == 429:
        assert time.monotonic() < deadline, "the slow path never let the attempt through"
        time.sleep(0.25)
