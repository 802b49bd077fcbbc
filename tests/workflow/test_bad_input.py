"""Bad input gets a 4xx naming the field and the reason, and changes nothing."""

from __future__ import annotations

import pytest

from annotator.models import AuditEntry, Ledger, LedgerEvent, Packet
from tests.factories import client_for, make_ready_video

GOOD = {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 30}

BAD_EVENTS = [
    ({**GOOD, "verb": "juggle"}, "verb", "not one of the allowed values"),
    ({**GOOD, "nouns": []}, "nouns", "at least 1"),
    ({**GOOD, "nouns": ["cup", "cup"]}, "nouns", "repeats"),
    ({**GOOD, "nouns": ["unicorn"]}, "nouns", "not one of the allowed values"),
    ({**GOOD, "start_frame": 30, "end_frame": 10}, "end_frame", "must be after"),
    ({**GOOD, "start_frame": 10.5}, "start_frame", "integer"),
    ({**GOOD, "start_frame": True}, "start_frame", "integer"),
    ({**GOOD, "end_frame": 25692}, "end_frame", "at most 25691"),
    ({**GOOD, "start_frame": -1}, "start_frame", "at least 0"),
    ({k: v for k, v in GOOD.items() if k != "verb"}, "verb", "required"),
    ({**GOOD, "colour": "red"}, "colour", "not a field"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("event", "field", "reason"), BAD_EVENTS)
def test_invalid_events_are_refused_with_the_field_and_reason(packet, annotator_a, event, field, reason):
    audit_before = AuditEntry.objects.count()
    response = client_for(annotator_a).post(
        f"/api/packets/{packet.pk}/ledger/events/", {"data": event, "version": 0}, format="json"
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field and reason in error["message"], error
    assert LedgerEvent.objects.count() == 0
    assert Ledger.objects.get(packet=packet, side="A").version == 0
    assert AuditEntry.objects.count() == audit_before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body", [b"not json", b"[1, 2]", b'{"data": "x", "version": 0}', b'{"data": {}, "version": "0"}']
)
def test_malformed_bodies_get_a_clear_error(packet, annotator_a, body):
    response = client_for(annotator_a).generic(
        "POST", f"/api/packets/{packet.pk}/ledger/events/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"]
    assert LedgerEvent.objects.count() == 0


@pytest.mark.django_db
def test_a_stale_version_is_refused_and_changes_nothing(packet, annotator_a):
    client = client_for(annotator_a)
    first = client.post(
        f"/api/packets/{packet.pk}/ledger/events/",
        {"data": GOOD},
        format="json",
        HTTP_IF_MATCH=f'"ledger-{Ledger.objects.get(packet=packet, side="A").pk}-v0"',
    )
    assert first.status_code == 201
    stale = client.post(f"/api/packets/{packet.pk}/ledger/events/", {"data": {**GOOD, "end_frame": 40}},
                        format="json", HTTP_IF_MATCH=first.request["HTTP_IF_MATCH"])  # fmt: skip
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "stale_version"
    by_body = client.post(f"/api/packets/{packet.pk}/ledger/events/", {"data": GOOD, "version": 0}, format="json")
    assert by_body.status_code == 412
    assert LedgerEvent.objects.count() == 1


@pytest.mark.django_db
def test_a_write_without_a_version_is_refused(packet, annotator_a):
    response = client_for(annotator_a).post(f"/api/packets/{packet.pk}/ledger/events/", {"data": GOOD}, format="json")
    assert response.status_code == 400 and response.json()["error"]["field"] == "version"


@pytest.mark.django_db
def test_a_packet_needs_three_different_people(maintainer, annotator_a, annotator_b):
    video = make_ready_video()
    client = client_for(maintainer)
    body = {"title": "p", "video": video.pk, "task_kind": "action-ledger", "annotator_a": "annotator_a",
            "annotator_b": "annotator_b", "adjudicator": "annotator_a"}  # fmt: skip
    response = client.post("/api/packets/", body, format="json")
    assert response.status_code == 400
    assert "three different people" in response.json()["error"]["message"]
    assert Packet.objects.count() == 0
    response = client.post("/api/packets/", {**body, "adjudicator": "nobody"}, format="json")
    assert response.status_code == 400 and "no user 'nobody'" in response.json()["error"]["message"]


@pytest.mark.django_db
def test_the_database_refuses_a_packet_with_repeated_people(packet):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Packet.objects.filter(pk=packet.pk).update(adjudicator=packet.annotator_a)


@pytest.mark.django_db
def test_a_decision_needs_a_rationale_and_a_valid_edit(packet, annotator_a, annotator_b, adjudicator):
    from annotator.actions.ledgers import do_add_event, do_freeze_ledger
    from annotator.actions.union import do_build_union

    for side, user in (("A", annotator_a), ("B", annotator_b)):
        ledger = Ledger.objects.get(packet=packet, side=side)
        do_add_event(ledger, {**GOOD, "verb": "take" if side == "A" else "put"}, actor=user, expected_version=0)
        do_freeze_ledger(ledger, actor=user, attestation="I labelled this alone, honestly.", expected_version=1)
    do_build_union(packet, actor=adjudicator)
    client = client_for(adjudicator)
    url = f"/api/packets/{packet.pk}/union/items/0/decision/"
    assert (
        client.post(url, {"action": "take_a", "rationale": ""}, format="json").json()["error"]["field"] == "rationale"
    )
    assert (
        client.post(url, {"action": "flip", "rationale": "ok ok"}, format="json").json()["error"]["field"] == "action"
    )
    bad_edit = client.post(
        url, {"action": "edit", "final_value": {**GOOD, "verb": "juggle"}, "rationale": "ok ok"}, format="json"
    )
    assert bad_edit.status_code == 400 and bad_edit.json()["error"]["field"] == "verb"
