"""People pages: invitations with a one-time link, roles, deactivation, password links;
everyone but a maintainer gets 404 on them."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotator.actions.people import do_invite_person
from annotator.base.errors import Conflict, InvalidInput
from annotator.models import AuditEntry
from tests.factories import client_for

PEOPLE_URLS = ["/people/", "/people/{pk}/"]


def link_from(response) -> str:
    match = re.search(r'value="https?://[^/"]+(/people/set-password/[^"]+/)"', response.content.decode())
    assert match, "no one-time link on the page"
    return match.group(1)


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["annotator_a", "adjudicator", "outsider"])
def test_people_pages_answer_404_to_everyone_but_maintainers(persona, request, maintainer):
    user = request.getfixturevalue(persona)
    client = client_for(user)
    for url in PEOPLE_URLS:
        url = url.format(pk=maintainer.pk)
        assert client.get(url).status_code == 404
        assert client.post(url, {"username": "mallory", "roles": ["maintainer"], "op": "roles"}).status_code == 404
    assert not User.objects.filter(username="mallory").exists()
    assert list(maintainer.groups.values_list("name", flat=True)) == ["maintainers"]
    assert Client().get("/people/").status_code == 302  # signed out: to the sign-in page


@pytest.mark.django_db
def test_invite_link_sets_the_password_once_and_the_invitee_signs_in(maintainer):
    response = client_for(maintainer).post(
        "/people/", {"username": "carol", "email": "c@example.org", "roles": ["annotator"]}
    )
    assert response.status_code == 200
    path = link_from(response)
    carol = User.objects.get(username="carol")
    assert not carol.has_usable_password()
    assert [g.name for g in carol.groups.all()] == ["annotators"]
    visitor = Client()
    assert visitor.get(path).status_code == 200
    short = visitor.post(path, {"password": "short", "confirmation": "short"})
    assert short.status_code == 400 and b"too short" in short.content
    done = visitor.post(path, {"password": "a long secret 42", "confirmation": "a long secret 42"})
    assert done.status_code == 302 and done["Location"].startswith("/login/")
    assert Client().login(username="carol", password="a long secret 42")
    # One use: the token hashed the old (unusable) password.
    again = visitor.post(path, {"password": "another secret 43", "confirmation": "another secret 43"})
    assert again.status_code == 404 and b"does not work" in again.content
    operations = list(AuditEntry.objects.order_by("seq").values_list("operation", flat=True))
    assert operations[-2:] == ["invite_person", "set_own_password"]
    assert "a long secret" not in str(list(AuditEntry.objects.values_list("details", flat=True)))


@pytest.mark.django_db
def test_invite_refuses_a_taken_name_and_an_unknown_role_and_creates_nothing(maintainer, annotator_a):
    client = client_for(maintainer)
    taken = client.post("/people/", {"username": "Annotator_A", "roles": ["annotator"]})
    assert taken.status_code == 409 and b"is taken" in taken.content
    unknown = client.post("/people/", {"username": "dave", "roles": ["owner"]})
    assert unknown.status_code == 400 and b"unknown role" in unknown.content
    none = client.post("/people/", {"username": "dave"})
    assert none.status_code == 400 and b"at least one role" in none.content
    assert not User.objects.filter(username="dave").exists()


@pytest.mark.django_db
def test_roles_change_grants_and_removes_the_maintainer_pages(maintainer, annotator_a):
    client = client_for(maintainer)
    assert client_for(annotator_a).get("/dashboard/").status_code == 404
    response = client.post(f"/people/{annotator_a.pk}/", {"op": "roles", "roles": ["annotator", "maintainer"]})
    assert response.status_code == 200
    assert client_for(annotator_a).get("/dashboard/").status_code == 200
    client.post(f"/people/{annotator_a.pk}/", {"op": "roles", "roles": ["adjudicator"]})
    assert client_for(annotator_a).get("/dashboard/").status_code == 404
    entry = AuditEntry.objects.filter(operation="set_roles").order_by("seq").last()
    assert entry.details == {"username": "annotator_a", "before": ["annotator", "maintainer"], "after": ["adjudicator"]}
    own = client.post(f"/people/{maintainer.pk}/", {"op": "roles", "roles": ["annotator"]})
    assert own.status_code == 400 and b"your own maintainer role" in own.content
    assert client.get("/dashboard/").status_code == 200


@pytest.mark.django_db
def test_deactivated_person_cannot_sign_in_nor_reach_their_packet(maintainer, packet, annotator_a):
    client = client_for(maintainer)
    assert client.post(f"/people/{annotator_a.pk}/", {"op": "deactivate"}).status_code == 200
    annotator_a.refresh_from_db()
    assert not annotator_a.is_active
    assert not Client().login(username="annotator_a", password="annotator_a-password")
    assert client_for(annotator_a).get(f"/api/packets/{packet.pk}/").status_code in {401, 403, 404}
    assert client.post(f"/people/{maintainer.pk}/", {"op": "deactivate"}).status_code == 400
    assert client.post(f"/people/{annotator_a.pk}/", {"op": "activate"}).status_code == 200
    assert Client().login(username="annotator_a", password="annotator_a-password")
    ops = AuditEntry.objects.filter(object_id=str(annotator_a.pk), object_type="auth.User").values_list(
        "operation", flat=True
    )
    assert sorted(ops) == ["activate_person", "deactivate_person"]


@pytest.mark.django_db
def test_password_reset_link_and_direct_password(maintainer, annotator_b):
    client = client_for(maintainer)
    path = link_from(client.post(f"/people/{annotator_b.pk}/", {"op": "link"}))
    annotator_b.refresh_from_db()
    assert annotator_b.check_password("annotator_b-password")  # the old one works until the link is used
    assert Client().post(path, {"password": "new secret 123", "confirmation": "new secret 123"}).status_code == 302
    assert not Client().login(username="annotator_b", password="annotator_b-password")
    assert Client().login(username="annotator_b", password="new secret 123")
    differ = client.post(f"/people/{annotator_b.pk}/", {"op": "password", "password": "abcdefgh1", "confirmation": "x"})
    assert differ.status_code == 400 and b"differ" in differ.content
    ok = client.post(
        f"/people/{annotator_b.pk}/", {"op": "password", "password": "set by maint 9", "confirmation": "set by maint 9"}
    )
    assert ok.status_code == 200
    assert Client().login(username="annotator_b", password="set by maint 9")
    assert AuditEntry.objects.filter(operation="set_password", actor=maintainer).count() == 1


@pytest.mark.django_db
def test_invalid_links_say_so(maintainer):
    for path in ["/people/set-password/0/0/", "/people/set-password/MQ/abc-def/", "/people/set-password/%%%/x/"]:
        response = Client().get(path)
        assert response.status_code == 404


@pytest.mark.django_db
def test_do_invite_person_rejects_bad_names(maintainer):
    with pytest.raises(InvalidInput):
        do_invite_person(actor=maintainer, username="has space", roles=["annotator"])
    do_invite_person(actor=maintainer, username="erin", roles=["annotator"])
    with pytest.raises(Conflict):
        do_invite_person(actor=maintainer, username="ERIN", roles=["annotator"])


def test_look_alike_user_names_are_refused(maintainer, annotator_a):

    before = User.objects.count(), AuditEntry.objects.count()
    # Cyrillic a, dotless i, Cyrillic i, a fullwidth low line
    for name in ("annotator_\u0430", "adm\u0131n", "ma\u0456ntainer", "annotator\uff3fa"):
        with pytest.raises(InvalidInput, match="ASCII"):
            do_invite_person(actor=maintainer, username=name, roles=["annotator"])
    for name in ("annotator.a", "annotator_A", "rnaintainer", "maintalner", "rnaintainer"):
        with pytest.raises(Conflict):
            do_invite_person(actor=maintainer, username=name, roles=["annotator"])
    assert (User.objects.count(), AuditEntry.objects.count()) == before
    page = client_for(maintainer).post("/people/", {"username": "annotator_\u0430", "roles": ["annotator"]})
    assert page.status_code == 400 and not User.objects.filter(username="annotator_\u0430").exists()
    do_invite_person(actor=maintainer, username="annotator_c", roles=["annotator"])  # a different name passes


@pytest.mark.django_db
def test_a_maintainer_cannot_take_over_a_superusers_account(maintainer):
    root = User.objects.create_superuser("root", password="root-password-1")
    client = client_for(maintainer)
    for form in [
        {"op": "roles", "roles": ["annotator"]},
        {"op": "deactivate"},
        {"op": "link"},
        {"op": "password", "password": "taken over 123", "confirmation": "taken over 123"},
    ]:
        response = client.post(f"/people/{root.pk}/", form)
        assert response.status_code == 400 and b"only a superuser" in response.content, form
    root.refresh_from_db()
    assert root.is_active and root.check_password("root-password-1")
    assert b"set-password" not in client.post(f"/people/{root.pk}/", {"op": "link"}).content


@pytest.mark.django_db
def test_an_invitation_refuses_an_address_longer_than_its_column(maintainer):
    """``check_invite_person``: 254 characters (``User.email``); on PostgreSQL a longer one
    was the database's error, a 500."""
    client = client_for(maintainer)
    local = "a" * 64 + "@"
    too_long = local + "b" * (255 - len(local))
    refused = client.post("/people/", {"username": "erin", "email": too_long, "roles": ["annotator"]})
    assert refused.status_code == 400 and b"an e-mail address is at most 254 characters" in refused.content
    assert not User.objects.filter(username="erin").exists()
    fits = client.post("/people/", {"username": "erin", "email": too_long[:254], "roles": ["annotator"]})
    assert fits.status_code == 200 and User.objects.get(username="erin").email == too_long[:254]
