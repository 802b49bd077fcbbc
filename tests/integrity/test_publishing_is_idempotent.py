"""Item 9 of issue 10: publishing again with nothing changed returns the existing
version (200) instead of creating an identical new one."""

from __future__ import annotations

import pytest

from annotator.actions.versions import do_import_provisional_version
from annotator.models import GroundTruthVersion
from tests.factories import client_for
from tests.integrity.conftest import PROVISIONAL

pytestmark = pytest.mark.django_db


def test_publishing_twice_with_no_change_returns_the_same_version(packet, adjudicated, adjudicator):
    client = client_for(adjudicator)
    for _ in range(3):
        response = client.post(f"/api/packets/{packet.pk}/publish/")
        assert response.status_code == 200, response.content
        assert (response.json()["id"], response.json()["number"]) == (adjudicated.pk, 1)
    assert GroundTruthVersion.objects.filter(packet=packet, tier="adjudicated").count() == 1


def test_publishing_after_a_changed_decision_makes_a_new_version(packet, adjudicated, adjudicator):
    client = client_for(adjudicator)
    union_item = packet.union.items.exclude(status="agreed").order_by("position").first()
    response = client.post(
        f"/api/packets/{packet.pk}/union/items/{union_item.position}/decision/",
        {"action": "drop", "rationale": "not visible in the video after all"},
        format="json",
    )
    assert response.status_code == 200, response.content
    response = client.post(f"/api/packets/{packet.pk}/publish/")
    assert response.status_code == 201
    assert response.json()["number"] == 2
    assert response.json()["changelog"]["previous"]["sha256"] == adjudicated.sha256


def test_importing_the_same_labels_again_returns_the_same_version(packet, maintainer, provisional):
    again = do_import_provisional_version(packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="0" * 64)
    assert (again.pk, again.created) == (provisional.pk, False)
    other = do_import_provisional_version(packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="1" * 64)
    assert (other.number, other.created) == (2, True)
