"""A ledger holds up to its family's cap, and the union, the decisions, the publication and
the agreement report take two ledgers at that cap: one cap at every door. A decision verifies
the union row and the block of items it touches, so its cost does not grow with the union."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.actions.grading import do_agreement_report
from annotator.base import seals
from annotator.models import GroundTruthVersion, UnionItem
from annotator.reads.access import UNION_PAGE_SIZE
from scoring.align import MAX_LEDGER_ACTIONS
from tests.factories import client_for, make_packet, make_ready_video
from tests.workflow.large_ledgers import FRAMES, frozen_pair

pytestmark = pytest.mark.django_db


def decide(client, packet, position, action="take_a") -> tuple[int, int]:
    """(status, queries) of one decision through the API."""
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/api/packets/{packet.pk}/union/items/{position}/decision/",
            {"action": action, "rationale": "checked against the video"},
            format="json",
        )
    assert response.status_code == 200, response.content[:300]
    return response.status_code, len(queries)


def counting_row_seals(monkeypatch) -> list[int]:
    calls = [0]
    original = seals.row_seal

    def counted(obj, names=None):
        calls[0] += 1
        return original(obj, names)

    monkeypatch.setattr(seals, "row_seal", counted)
    return calls


def test_the_union_of_two_ledgers_at_the_cap_is_built_adjudicated_and_published(
    maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    people = (maintainer, annotator_a, annotator_b, adjudicator)
    small = make_packet(*people, title="small", video=make_ready_video("s", frame_count=FRAMES))
    large = make_packet(*people, title="large", video=make_ready_video("l", frame_count=FRAMES))
    frozen_pair(small, 2, every=2)
    frozen_pair(large, MAX_LEDGER_ACTIONS, every=500)
    client = client_for(adjudicator)
    built = client.post(f"/api/packets/{large.pk}/union/")
    assert built.status_code == 200, built.content[:300]
    assert built.json()["count"] >= MAX_LEDGER_ACTIONS and len(built.json()["items"]) == UNION_PAGE_SIZE
    served, next_url, costs = built.json()["items"], built.json()["next"], set()
    calls = counting_row_seals(monkeypatch)
    while next_url:  # the whole union, a page at a time, each page at the same cost
        calls[0] = 0
        with CaptureQueriesContext(connection) as queries:
            page = client.get(next_url)
        assert page.status_code == 200, page.content[:300]
        costs.add((len(queries), calls[0]))
        served += page.json()["items"]
        next_url = page.json()["next"]
    assert [item["position"] for item in served] == list(range(built.json()["count"]))
    assert max(seals_read for _, seals_read in costs) <= UNION_PAGE_SIZE + 4, costs  # its blocks, not the union
    assert len({queries for queries, _ in costs}) == 1, costs
    assert client.post(f"/api/packets/{small.pk}/union/").status_code == 200
    _, small_queries = decide(client, small, 0)
    conflicting = UnionItem.objects.filter(union__packet=large).exclude(status="agreed").order_by("position")
    positions = list(conflicting.values_list("position", "a_index"))
    assert MAX_LEDGER_ACTIONS // 500 <= len(positions) < 50
    for position, a_index in positions:
        calls[0] = 0
        _, queries = decide(client, large, position, "take_a" if a_index is not None else "drop")
        assert queries == small_queries  # the same statements whatever the union's size
        assert calls[0] <= seals.UNION_BLOCK + 4, calls[0]  # its block, the union row, the decision
    published = client.post(f"/api/packets/{large.pk}/publish/")
    assert published.status_code == 201, published.content[:300]
    version = GroundTruthVersion.objects.get(packet=large, tier="adjudicated")
    assert version.pk == published.json()["id"]
    report = do_agreement_report(large, actor=None).report
    assert report["ledgers"]["A"]["events"] == MAX_LEDGER_ACTIONS
    assert sum(n for status, n in report["a_vs_b"]["union"].items() if status != "agreed") == len(positions)
