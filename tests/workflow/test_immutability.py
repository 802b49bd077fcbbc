"""Frozen ledgers and published versions never change."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.versions import do_import_provisional_version
from annotator.models import GroundTruthVersion, Ledger
from annotator.models.immutable import ImmutableRowError
from tests.factories import client_for

EVENT = {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 30}
ATTESTATION = "I labelled this video alone, from the video only."


@pytest.fixture
def frozen_a(packet, annotator_a):
    ledger = Ledger.objects.get(packet=packet, side="A")
    do_add_event(ledger, EVENT, actor=annotator_a, expected_version=0)
    return do_freeze_ledger(ledger, actor=annotator_a, attestation=ATTESTATION, expected_version=1)


@pytest.mark.django_db
def test_freeze_rejects_every_write_after_freeze(packet, frozen_a, annotator_a):
    client = client_for(annotator_a)
    before = (
        frozen_a.version,
        frozen_a.sha256,
        frozen_a.canonical_json,
        list(frozen_a.events.values_list("data", flat=True)),
    )
    event_uid = frozen_a.events.get().uid
    version = frozen_a.version
    writes = [
        client.post(f"/api/packets/{packet.pk}/ledger/events/", {"data": EVENT, "version": version}, format="json"),
        client.put(
            f"/api/packets/{packet.pk}/ledger/events/{event_uid}/", {"data": EVENT, "version": version}, format="json"
        ),
        client.delete(f"/api/packets/{packet.pk}/ledger/events/{event_uid}/", {"version": version}, format="json"),
        client.post(
            f"/api/packets/{packet.pk}/ledger/freeze/", {"attestation": ATTESTATION, "version": version}, format="json"
        ),
    ]
    for response in writes:
        assert response.status_code == 409, response.content
        assert response.json()["error"]["code"] == "conflict"
        assert "frozen" in response.json()["error"]["message"]
    frozen_a.refresh_from_db()
    after = (
        frozen_a.version,
        frozen_a.sha256,
        frozen_a.canonical_json,
        list(frozen_a.events.values_list("data", flat=True)),
    )
    assert after == before


@pytest.mark.django_db
def test_freeze_hash_covers_the_canonical_json(frozen_a):
    import hashlib

    assert hashlib.sha256(frozen_a.canonical_json.encode("utf-8")).hexdigest() == frozen_a.sha256
    assert frozen_a.canonical_json.startswith('{"events":[{"end_frame":30,')


@pytest.mark.django_db
def test_freeze_requires_an_attestation(packet, annotator_a):
    response = client_for(annotator_a).post(
        f"/api/packets/{packet.pk}/ledger/freeze/", {"attestation": "ok", "version": 0}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "attestation"
    assert not Ledger.objects.get(packet=packet, side="A").is_frozen


@pytest.mark.django_db
def test_published_versions_cannot_be_saved_or_deleted(packet, maintainer):
    version = do_import_provisional_version(packet, [EVENT], actor=maintainer, source="test", source_sha256="0" * 64)
    version.source = "edited"
    with pytest.raises(ImmutableRowError):
        version.save()
    with pytest.raises(ImmutableRowError):
        version.delete()
    assert GroundTruthVersion.objects.get(pk=version.pk).source == "test"


@pytest.mark.django_db
def test_a_correction_is_a_new_version_with_a_changelog(packet, maintainer):
    first = do_import_provisional_version(packet, [EVENT], actor=maintainer, source="test", source_sha256="0" * 64)
    moved = {**EVENT, "end_frame": 31}
    second = do_import_provisional_version(
        packet, [EVENT, moved], actor=maintainer, source="test", source_sha256="1" * 64
    )
    assert (first.number, second.number) == (1, 2)
    assert second.changelog["previous"]["sha256"] == first.sha256
    assert second.changelog["added"] == 1 and second.changelog["kept"] == 1
    assert first.sha256 != second.sha256


@pytest.mark.django_db
def test_events_of_a_frozen_ledger_refuse_direct_writes_too(frozen_a):
    event = frozen_a.events.get()
    event.data = {**EVENT, "end_frame": 99}
    with pytest.raises(ImmutableRowError):
        event.save()
    with pytest.raises(ImmutableRowError):
        event.delete()
