"""The page shells: who gets which page, and that a page says no more than the API would."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_import_provisional_version, do_publish_adjudicated_version
from annotator.models import Ledger

pytestmark = pytest.mark.django_db

EVENT = {"verb": "take", "nouns": ["egg"], "start_frame": 10, "end_frame": 20}
ATTESTATION = "I labelled this video alone, from the video only."


def browser_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def page_config(response) -> dict:
    match = re.search(rb'<script id="page-config" type="application/json">(.*?)</script>', response.content, re.S)
    assert match, "the page carries no page-config"
    return json.loads(match.group(1))


def publish(packet, *, actor_a, actor_b, adjudicator):
    for side, actor in (("A", actor_a), ("B", actor_b)):
        ledger = Ledger.objects.get(packet=packet, side=side)
        do_add_event(ledger, EVENT, actor=actor, expected_version=ledger.version)
        do_freeze_ledger(ledger, actor=actor, attestation=ATTESTATION, expected_version=ledger.version)
    do_build_union(packet, actor=adjudicator)
    return do_publish_adjudicated_version(packet, actor=adjudicator)


@pytest.mark.parametrize(
    ("persona", "template_marker"),
    [
        ("annotator_a", b'id="workspace"'),
        ("annotator_b", b'id="workspace"'),
        ("adjudicator", b'id="adjudication"'),
        ("maintainer", b'id="maintainer-packet"'),
    ],
)
def test_the_packet_page_routes_each_role_to_its_page(request, packet, persona, template_marker):
    user = request.getfixturevalue(persona)
    response = browser_for(user).get(f"/packets/{packet.pk}/")
    assert response.status_code == 200
    assert template_marker in response.content
    config = page_config(response)
    assert config["packetId"] == packet.pk and config["role"] == persona and config["username"] == user.username
    assert config["media"]["proxy"] == f"/media/packets/{packet.pk}/proxy.mp4"


def test_a_hidden_packet_looks_exactly_like_a_missing_one(packet, outsider):
    client = browser_for(outsider)
    for path in ("/packets/{}/", "/packets/{}/adjudicate/", "/packets/{}/audit/"):
        hidden = client.get(path.format(packet.pk))
        missing = client.get(path.format(packet.pk + 1000))
        assert hidden.status_code == missing.status_code == 404
        assert hidden.content == missing.content


def test_pages_need_a_signed_in_user(packet):
    for path in (f"/packets/{packet.pk}/", "/maintainer/packets/new/", "/versions/1/"):
        response = Client().get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/packets/{id}/adjudicate/", {"adjudicator", "maintainer"}),
        ("/packets/{id}/audit/", {"maintainer"}),
        ("/maintainer/packets/new/", {"maintainer"}),
    ],
)
def test_role_pages_are_404_for_everyone_else(request, packet, path, allowed):
    for persona in ("annotator_a", "annotator_b", "adjudicator", "maintainer", "outsider"):
        response = browser_for(request.getfixturevalue(persona)).get(path.format(id=packet.pk))
        assert response.status_code == (200 if persona in allowed else 404), persona


def test_an_annotators_page_names_nobody_else_and_no_other_ledger(packet, annotator_a, annotator_b, adjudicator):
    ledger_b = Ledger.objects.get(packet=packet, side="B")
    body = browser_for(annotator_a).get(f"/packets/{packet.pk}/").content.decode()
    for forbidden in (annotator_b.username, adjudicator.username, f"ledger-{ledger_b.pk}-"):
        assert forbidden not in body
    assert "/ledgers/" not in body  # the shell never points at the by-side ledger API


def test_the_version_page_follows_the_version_access_rules(
    packet, annotator_a, annotator_b, adjudicator, maintainer, outsider
):
    version = publish(packet, actor_a=annotator_a, actor_b=annotator_b, adjudicator=adjudicator)
    provisional = do_import_provisional_version(
        packet, [EVENT], actor=maintainer, source="published labels", source_sha256="0" * 64
    )
    for user in (annotator_a, annotator_b, adjudicator, maintainer):
        response = browser_for(user).get(f"/versions/{version.pk}/")
        assert response.status_code == 200
        assert page_config(response)["versionId"] == version.pk
    assert browser_for(outsider).get(f"/versions/{version.pk}/").status_code == 404
    # The provisional tier (imported labels) is for maintainers only.
    assert browser_for(maintainer).get(f"/versions/{provisional.pk}/").status_code == 200
    for user in (annotator_a, annotator_b, adjudicator, outsider):
        assert browser_for(user).get(f"/versions/{provisional.pk}/").status_code == 404


def test_the_home_page_offers_a_new_packet_to_maintainers_only(maintainer, annotator_a):
    assert b'id="new-packet-link"' in browser_for(maintainer).get("/").content
    assert b'id="new-packet-link"' not in browser_for(annotator_a).get("/").content
