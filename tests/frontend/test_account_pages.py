"""Every signed-in person (annotators and adjudicators too) has a help page and changes
their own password with Django's views; the top bar links to both."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["annotator_a", "adjudicator"])
def test_help_and_own_password_change(who, request):
    user = request.getfixturevalue(who)
    user.set_password("old-password-123")
    user.save()
    client = Client()
    client.force_login(user)
    home = client.get("/").content.decode()
    assert 'href="/help/"' in home and 'href="/account/password/"' in home
    assert "Change your password" in client.get("/help/").content.decode()
    refused = client.post(
        "/account/password/",
        {"old_password": "wrong", "new_password1": "a-new-pass-456", "new_password2": "a-new-pass-456"},
    )
    assert refused.status_code == 200 and "old password was entered incorrectly" in refused.content.decode()
    changed = client.post(
        "/account/password/",
        {"old_password": "old-password-123", "new_password1": "a-new-pass-456", "new_password2": "a-new-pass-456"},
    )
    assert changed.status_code == 302 and changed["Location"] == "/account/password/done/"
    user.refresh_from_db()
    assert user.check_password("a-new-pass-456")
    assert client.get("/account/password/done/").status_code == 200  # still signed in here


@pytest.mark.django_db
def test_the_account_pages_need_a_sign_in():
    assert Client().get("/account/password/").status_code == 302
    assert Client().get("/help/").status_code == 302
