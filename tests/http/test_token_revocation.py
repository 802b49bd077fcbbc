"""API tokens die with their password and their account: revoked when the password changes
(by its owner, by a maintainer, through a one-time link, or outside the pages) and when the
account is deactivated (reactivation brings none back); listed and revoked by their owner
(maintainers: anyone's, unless separation of duties applies); at most
``FRAMELEDGER_TOKENS_PER_PERSON`` per person; every issue and revocation audited by name."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotator.models import AuditEntry
from tests.factories import client_for, make_maintainer

NEW = "a long secret 42"


def issue(username: str, password: str | None = None) -> dict:
    password = password or f"{username}-password"
    response = Client().post(
        "/api/auth/token/", {"username": username, "password": password}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def works(token: str) -> bool:
    status = Client().get("/api/me/", HTTP_AUTHORIZATION=f"Token {token}").status_code
    assert status in {200, 401, 403}
    return status == 200


def revocations(person) -> list[str]:
    entries = AuditEntry.objects.filter(operation="revoke_token", object_id=str(person.pk)).order_by("seq")
    return [entry.details["prefix"] for entry in entries]


@pytest.mark.django_db
def test_changing_ones_own_password_revokes_ones_tokens(annotator_a):
    token = issue("annotator_a")["token"]
    client = client_for(annotator_a)
    form = {"old_password": "annotator_a-password", "new_password1": NEW, "new_password2": NEW}
    assert client.post("/account/password/", form).status_code == 302
    assert not works(token)
    assert revocations(annotator_a) == [token[:8]]
    assert client.get("/api/me/").status_code == 200  # this session stays signed in
    assert works(issue("annotator_a", NEW)["token"])


@pytest.mark.django_db
def test_a_password_set_by_a_maintainer_or_through_a_link_revokes_the_tokens(annotator_a, maintainer):
    first = issue("annotator_a")["token"]
    form = {"op": "password", "password": NEW, "confirmation": NEW}
    assert client_for(maintainer).post(f"/people/{annotator_a.pk}/", form).status_code == 200
    assert not works(first)
    second = issue("annotator_a", NEW)["token"]
    page = client_for(maintainer).post(f"/people/{annotator_a.pk}/", {"op": "link"}).content.decode()
    link = re.search(r'value="https?://[^/"]+(/people/set-password/[^"]+/)"', page).group(1)
    assert (
        Client().post(link, {"password": "another secret 43", "confirmation": "another secret 43"}).status_code == 302
    )
    assert not works(second)
    assert revocations(annotator_a) == [first[:8], second[:8]]


@pytest.mark.django_db
def test_a_password_changed_outside_the_pages_still_revokes_the_tokens(annotator_a):
    token = issue("annotator_a")["token"]
    user = User.objects.get(pk=annotator_a.pk)
    user.set_password(NEW)  # as manage.py changepassword or the admin do
    user.save()
    assert not works(token)


@pytest.mark.django_db
def test_deactivation_revokes_the_tokens_and_reactivation_brings_none_back(annotator_a, maintainer):
    token = issue("annotator_a")["token"]
    client = client_for(maintainer)
    assert client.post(f"/people/{annotator_a.pk}/", {"op": "deactivate"}).status_code == 200
    assert client.post(f"/people/{annotator_a.pk}/", {"op": "activate"}).status_code == 200
    assert not works(token)
    assert revocations(annotator_a) == [token[:8]]


@pytest.mark.django_db
def test_a_person_lists_and_revokes_their_own_tokens_and_no_one_elses(annotator_a, annotator_b):
    mine = [issue("annotator_a") for _ in range(2)]
    theirs = issue("annotator_b")
    client = client_for(annotator_a)
    listed = client.get("/api/auth/tokens/").json()
    assert sorted(row["prefix"] for row in listed) == sorted(t["token"][:8] for t in mine)
    assert all(set(row) == {"id", "prefix", "user", "created_at", "expires_at"} for row in listed)
    assert client.get(f"/api/auth/tokens/?user={annotator_b.pk}").status_code == 404
    their_id = client_for(annotator_b).get("/api/auth/tokens/").json()[0]["id"]
    assert client.delete(f"/api/auth/tokens/{their_id}/").status_code == 404
    assert works(theirs["token"])
    assert client.delete(f"/api/auth/tokens/{listed[0]['id']}/").status_code == 204
    assert len(client.get("/api/auth/tokens/").json()) == 1
    page = client.get("/account/tokens/").content.decode()
    assert listed[1]["prefix"] in page and listed[0]["prefix"] not in page
    assert client.post("/account/tokens/", {"token": listed[1]["id"]}).status_code == 200
    assert not any(works(t["token"]) for t in mine)
    assert sorted(revocations(annotator_a)) == sorted(t["token"][:8] for t in mine)


@pytest.mark.django_db
def test_a_maintainer_revokes_anyones_token_but_not_while_blind(packet, annotator_a, annotator_b, maintainer):
    token = issue("annotator_a")["token"]
    make_maintainer(annotator_b)  # annotator B of the packet: blind
    blind = client_for(annotator_b)
    assert blind.get(f"/api/auth/tokens/?user={annotator_a.pk}").status_code == 404
    token_id = client_for(annotator_a).get("/api/auth/tokens/").json()[0]["id"]
    assert blind.delete(f"/api/auth/tokens/{token_id}/").status_code == 404
    assert token[:8] not in blind.get("/audit/").content.decode()
    assert works(token)
    client = client_for(maintainer)
    assert [row["prefix"] for row in client.get(f"/api/auth/tokens/?user={annotator_a.pk}").json()] == [token[:8]]
    assert token[:8] in client.get(f"/people/{annotator_a.pk}/").content.decode()
    assert client.post(f"/people/{annotator_a.pk}/", {"op": "revoke-token", "token": token_id}).status_code == 200
    assert not works(token)
    entry = AuditEntry.objects.filter(operation="revoke_token").latest("seq")
    assert entry.actor_id == maintainer.pk and entry.details["prefix"] == token[:8]


@pytest.mark.django_db
def test_one_person_holds_at_most_the_cap_of_tokens(annotator_a, settings):
    settings.FRAMELEDGER_TOKENS_PER_PERSON = 3
    tokens = [issue("annotator_a")["token"] for _ in range(3)]
    over = Client().post(
        "/api/auth/token/",
        {"username": "annotator_a", "password": "annotator_a-password"},
        content_type="application/json",
    )
    assert over.status_code == 409 and "revoke one" in over.json()["error"]["message"]
    assert all(works(t) for t in tokens)
    issued = AuditEntry.objects.filter(operation="issue_token", object_id=str(annotator_a.pk))
    assert sorted(e.details["prefix"] for e in issued) == sorted(t[:8] for t in tokens)
