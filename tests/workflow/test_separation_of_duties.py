"""Separation of duties: a person blind on a packet reaches none of what that blindness
hides through account administration (``docs/workflow.md``, "Separation of duties").

Over HTTP, through the people pages as a maintainer who annotates would use them: while
blind he cannot invite, change roles, passwords, links or activity (403, nothing written,
the page names who can); accounts whose password he chose, or whose one-time link he
issued, get nothing (or no maintainer's view) of his blind packets.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from annotator.actions.versions import do_import_provisional_version
from annotator.models import AuditEntry
from tests.factories import client_for, make_maintainer, make_packet

PASSWORD = "a long secret 42"
PEOPLE_OPERATIONS = {"invite_person", "set_roles", "set_password", "issue_password_link", "activate_person"}


def invite(client, username: str, roles) -> str:
    """Invite through the page; the one-time link's path."""
    response = client.post("/people/", {"username": username, "roles": roles})
    assert response.status_code == 200, response.content[:300]
    return re.search(r'value="https?://[^/"]+(/people/set-password/[^"]+/)"', response.content.decode()).group(1)


def use_link(path: str, password: str = PASSWORD) -> None:
    response = Client().post(path, {"password": password, "confirmation": password})
    assert response.status_code == 302


def signed_in(username: str, password: str = PASSWORD) -> Client:
    client = Client()
    assert client.login(username=username, password=password)
    return client


def with_provisional_key(packet, maintainer):
    events = [{"verb": "cut", "nouns": ["bagel"], "start_frame": 3333, "end_frame": 3399}]
    return do_import_provisional_version(packet, events, actor=maintainer, source="test", source_sha256="0" * 64)


@pytest.mark.django_db
def test_a_maintainer_blind_on_a_packet_cannot_invite_and_the_page_names_who_can(packet, annotator_b, maintainer):
    make_maintainer(annotator_b)
    client = client_for(annotator_b)
    page = client.get("/people/").content.decode()
    assert 'id="invite-form"' not in page
    banner = re.search(r'id="administration-refused"[^>]*>(.*?)</p>', page, re.S).group(1)
    assert maintainer.username in banner and annotator_b.username not in banner
    refused = client.post("/people/", {"username": "puppet", "roles": ["maintainer"]})
    assert refused.status_code == 403
    assert maintainer.username in refused.content.decode()
    assert not User.objects.filter(username="puppet").exists()


@pytest.mark.django_db
def test_a_blind_maintainer_cannot_reset_change_or_reactivate_other_accounts(
    packet, annotator_a, annotator_b, outsider
):
    make_maintainer(annotator_b)
    outsider.is_active = False
    outsider.save()
    client = client_for(annotator_b)
    attempts = [
        (annotator_a, {"op": "password", "password": PASSWORD, "confirmation": PASSWORD}),
        (annotator_a, {"op": "link"}),
        (annotator_a, {"op": "roles", "roles": ["maintainer"]}),
        (annotator_a, {"op": "deactivate"}),
        (outsider, {"op": "activate"}),
    ]
    before = AuditEntry.objects.count()
    for person, form in attempts:
        response = client.post(f"/people/{person.pk}/", form)
        assert response.status_code == 403, form
        assert "/people/set-password/" not in response.content.decode()
        assert 'id="password-form"' not in response.content.decode()
    annotator_a.refresh_from_db()
    outsider.refresh_from_db()
    assert annotator_a.check_password("annotator_a-password") and annotator_a.is_active
    assert not annotator_a.groups.filter(name="maintainers").exists() and not outsider.is_active
    assert AuditEntry.objects.count() == before


@pytest.mark.django_db
def test_a_one_maintainer_team_is_told_of_the_operators_command_which_is_audited(packet, maintainer, annotator_b):
    make_maintainer(annotator_b)
    maintainer.groups.clear()
    page = client_for(annotator_b).get("/people/").content.decode()
    assert "manage.py people" in page
    call_command("people", "invite", "dana", "--role", "annotator")
    entry = AuditEntry.objects.filter(operation="invite_person").latest("seq")
    assert entry.actor_id is None and entry.details["username"] == "dana"


@pytest.mark.django_db
def test_other_peoples_last_sign_in_is_hidden_from_a_blind_maintainer(packet, annotator_a, annotator_b, maintainer):
    make_maintainer(annotator_b)
    annotator_a.last_login = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    annotator_a.save()
    assert "2 Jan 2026" in client_for(maintainer).get("/people/").content.decode()
    row = re.search(
        r'data-username="annotator_a">(.*?)</tr>', client_for(annotator_b).get("/people/").content.decode(), re.S
    )
    assert "2 Jan 2026" not in row.group(1) and "hidden" in row.group(1)


@pytest.mark.django_db
def test_an_account_a_maintainer_invited_for_himself_reads_nothing_of_his_blind_packet(
    maintainer, annotator_a, annotator_b, adjudicator
):
    make_maintainer(annotator_b)
    use_link(invite(client_for(annotator_b), "puppet", ["maintainer"]))  # before he is blind
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    key = with_provisional_key(packet, maintainer)
    puppet = signed_in("puppet")
    for url in [
        f"/api/packets/{packet.pk}/",
        f"/api/packets/{packet.pk}/audit/",
        f"/api/packets/{packet.pk}/versions/",
        f"/api/versions/{key.pk}/",
        f"/api/versions/{key.pk}/export/?file=gt.json",
    ]:
        assert puppet.get(url).status_code == 404, url
    assert puppet.get("/api/packets/").json() == []
    assert packet.title not in puppet.get("/dashboard/").content.decode()
    # Nor may it administer accounts while its maker is blind.
    assert puppet.post("/people/", {"username": "puppet2", "roles": ["maintainer"]}).status_code == 403
    # Another maintainer's account sees the packet as before.
    assert client_for(maintainer).get(f"/api/versions/{key.pk}/export/?file=gt.json").status_code == 200


@pytest.mark.django_db
def test_an_account_whose_password_a_blind_person_set_gets_nothing_until_a_new_link(
    maintainer, annotator_a, annotator_b, adjudicator
):
    make_maintainer(annotator_b)
    taken = {"op": "password", "password": "Taken-over-9", "confirmation": "Taken-over-9"}
    assert client_for(annotator_b).post(f"/people/{annotator_a.pk}/", taken).status_code == 200
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    as_a = signed_in("annotator_a", "Taken-over-9")
    assert as_a.get(f"/api/packets/{packet.pk}/ledger/").status_code == 404
    assert as_a.get(f"/api/packets/{packet.pk}/ledgers/A/").status_code == 404
    # Another maintainer's one-time link gives the account back to its owner.
    link = client_for(maintainer).post(f"/people/{annotator_a.pk}/", {"op": "link"}).content.decode()
    use_link(re.search(r'value="https?://[^/"]+(/people/set-password/[^"]+/)"', link).group(1))
    assert signed_in("annotator_a").get(f"/api/packets/{packet.pk}/ledger/").status_code == 200


@pytest.mark.django_db
def test_password_knowledge_is_followed_through_the_accounts_it_opens(
    maintainer, annotator_a, annotator_b, adjudicator
):
    make_maintainer(annotator_b)
    use_link(invite(client_for(annotator_b), "puppet", ["maintainer"]))
    third = invite(signed_in("puppet"), "third", ["maintainer"])  # the puppet invites another
    use_link(third, "Third-account-9")
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    key = with_provisional_key(packet, maintainer)
    assert signed_in("third", "Third-account-9").get(f"/api/versions/{key.pk}/").status_code == 404


@pytest.mark.django_db
def test_the_django_admin_follows_the_same_rule_and_records_the_passwords_it_sets(
    maintainer, annotator_a, annotator_b, adjudicator
):
    root = User.objects.create_superuser("root", password=PASSWORD)
    admin = signed_in("root")
    form = {"password1": "Admin-set-secret-9", "password2": "Admin-set-secret-9"}
    assert admin.post(f"/admin/auth/user/{annotator_a.pk}/password/", form).status_code == 302
    entry = AuditEntry.objects.filter(operation="set_password").latest("seq")
    assert entry.actor_id == root.pk and entry.object_id == str(annotator_a.pk)
    # Now root annotates: the admin refuses changes, and the account root set is fenced.
    packet = make_packet(maintainer, annotator_a, root, adjudicator)
    assert admin.get(f"/admin/auth/user/{annotator_b.pk}/change/").status_code in {200, 403}
    again = {"password1": "Another-secret-9", "password2": "Another-secret-9"}
    assert admin.post(f"/admin/auth/user/{annotator_b.pk}/password/", again).status_code == 403
    assert signed_in("annotator_a", "Admin-set-secret-9").get(f"/api/packets/{packet.pk}/ledger/").status_code == 404
