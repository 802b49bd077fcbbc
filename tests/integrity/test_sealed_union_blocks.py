"""A union sealed by blocks of items (``seals.UNION_BLOCK``): a decision verifies the union
row and the block of the item it decides; a page of the union API the blocks it serves;
publishing and ``verify_integrity`` every block. A changed item is never decided on,
published, served or missed by the check."""

from __future__ import annotations

import pytest

from annotator.base.seals import UNION_BLOCK
from annotator.models import GroundTruthVersion, Union, UnionItem
from annotator.reads.integrity import describe
from tests.factories import client_for, make_packet, make_ready_video
from tests.integrity.tampering import tamper, verify
from tests.workflow.large_ledgers import FRAMES, frozen_pair

pytestmark = pytest.mark.django_db

CUT = {"verb": "cut", "nouns": ["bagel"], "start_frame": 1, "end_frame": 2}


@pytest.fixture
def three_blocks(maintainer, annotator_a, annotator_b, adjudicator):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video(frame_count=FRAMES))
    frozen_pair(packet, 2 * UNION_BLOCK + 10, every=UNION_BLOCK // 2)
    assert client_for(adjudicator).post(f"/api/packets/{packet.pk}/union/").status_code == 200
    return packet


def decide(client, packet, item):
    return client.post(
        f"/api/packets/{packet.pk}/union/items/{item.position}/decision/",
        {"action": "take_a", "rationale": "checked against the video"},
        format="json",
    )


def test_a_changed_item_stops_decisions_on_its_block_and_every_publication(three_blocks, adjudicator):
    packet, client = three_blocks, client_for(adjudicator)
    open_items = list(UnionItem.objects.filter(union__packet=packet).exclude(status="agreed").order_by("position"))
    first, last = open_items[0], open_items[-1]
    assert first.position // UNION_BLOCK == 0 and last.position // UNION_BLOCK == 2
    changed = UnionItem.objects.get(union__packet=packet, position=last.position + 1)
    assert changed.position // UNION_BLOCK == 2
    tamper(changed, a_value=CUT)
    assert decide(client, packet, first).status_code == 200  # another block: what it rests on is intact
    refused = decide(client, packet, last)
    assert refused.status_code == 500 and refused.json()["error"]["code"] == "integrity_error"
    assert not hasattr(UnionItem.objects.get(pk=last.pk), "decision")
    for response in (client.get(f"/api/packets/{packet.pk}/union/"), client.post(f"/api/packets/{packet.pk}/publish/")):
        assert response.status_code == 500 and response.json()["error"]["code"] == "integrity_error"
    assert not GroundTruthVersion.objects.filter(packet=packet).exists()
    code, out = verify()
    union = Union.objects.get(packet=packet)
    assert code == 1 and f"PROBLEM {describe(union)}: its items or columns differ from the seal" in out, out


def test_an_item_added_past_the_recorded_count_is_refused(three_blocks, adjudicator):
    packet = three_blocks
    union = Union.objects.get(packet=packet)
    last = UnionItem.objects.filter(union=union).order_by("-position").first()
    tamper(last, position=10 * UNION_BLOCK)
    response = client_for(adjudicator).post(
        f"/api/packets/{packet.pk}/union/items/{10 * UNION_BLOCK}/decision/",
        {"action": "drop", "rationale": "checked against the video"},
        format="json",
    )
    assert response.status_code == 500 and response.json()["error"]["code"] == "integrity_error"
    assert verify()[0] == 1


def page(client, packet, **query):
    return client.get(f"/api/packets/{packet.pk}/union/", query)


def test_a_page_serves_and_verifies_only_the_blocks_it_touches(three_blocks, adjudicator):
    packet, client = three_blocks, client_for(adjudicator)
    count = UnionItem.objects.filter(union__packet=packet).count()
    assert count > 2 * UNION_BLOCK
    whole = page(client, packet).json()
    assert whole["count"] == count and len(whole["items"]) == count and whole["next"] is None
    first = page(client, packet, start=5, limit=UNION_BLOCK).json()  # across blocks 0 and 1
    assert [i["position"] for i in first["items"]] == list(range(5, 5 + UNION_BLOCK))
    assert first["items"] == whole["items"][5 : 5 + UNION_BLOCK]
    assert client.get(first["next"]).json()["items"] == whole["items"][5 + UNION_BLOCK : 5 + 2 * UNION_BLOCK]
    past = page(client, packet, start=count + 500).json()
    assert past["items"] == [] and past["next"] is None and past["count"] == count
    # An item of block 2 changed: pages that touch block 2 are refused, the others served.
    tamper(UnionItem.objects.get(union__packet=packet, position=2 * UNION_BLOCK + 3), a_value=CUT)
    assert page(client, packet, start=0, limit=2 * UNION_BLOCK).status_code == 200
    for query in ({}, {"start": 2 * UNION_BLOCK - 1, "limit": 2}, {"start": 2 * UNION_BLOCK + 9, "limit": 1}):
        refused = page(client, packet, **query)
        assert refused.status_code == 500 and refused.json()["error"]["code"] == "integrity_error", query


def test_a_page_past_the_recorded_items_finds_an_added_item(three_blocks, adjudicator):
    packet, client = three_blocks, client_for(adjudicator)
    last = UnionItem.objects.filter(union__packet=packet).order_by("-position").first()
    tamper(last, position=10 * UNION_BLOCK)
    refused = page(client, packet, start=10 * UNION_BLOCK, limit=1)
    assert refused.status_code == 500 and refused.json()["error"]["code"] == "integrity_error"


@pytest.mark.parametrize(
    "query",
    [
        {"start": "-1"},
        {"start": "x"},
        {"start": "²"},
        {"start": str(2**31)},
        {"limit": "0"},
        {"limit": "1025"},
        {"limit": "1.5"},
    ],
)
def test_bad_page_parameters_are_a_400_naming_the_parameter(three_blocks, adjudicator, query):
    response = page(client_for(adjudicator), three_blocks, **query)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["field"] == next(iter(query))
