"""Lists read once and a page at a time: the union API reads its items in one query (the
rows its seals are checked on are the rows shown, and a tampered one is still refused);
the audit view shows 100 entries a page by default and reaches the rest with its pager."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.models import AuditEntry, UnionItem
from annotator.models.audit_log import append_entry
from tests.factories import client_for, make_packet, make_ready_video
from tests.integrity.tampering import tamper
from tests.workflow.large_ledgers import FRAMES, frozen_pair

pytestmark = pytest.mark.django_db


def item_reads(captured) -> int:
    selects = [q["sql"] for q in captured if q["sql"].lstrip().startswith("SELECT")]
    return sum(1 for sql in selects if 'FROM "annotator_unionitem"' in sql)


def test_the_union_api_reads_its_items_once_and_still_through_the_seals(
    maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video(frame_count=FRAMES))
    frozen_pair(packet, 70, every=10)
    client = client_for(adjudicator)
    built = client.post(f"/api/packets/{packet.pk}/union/").json()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/api/packets/{packet.pk}/union/")
    assert response.status_code == 200 and response.json()["items"] == built["items"]
    assert [i["position"] for i in response.json()["items"]] == sorted(i["position"] for i in built["items"])
    assert item_reads(captured) == 1
    item = UnionItem.objects.filter(union__packet=packet).order_by("position").last()
    tamper(item, a_value={"verb": "forged"})
    assert client.get(f"/api/packets/{packet.pk}/union/").status_code >= 400


def test_the_audit_view_shows_100_entries_a_page_and_pages_to_the_rest(maintainer):
    for n in range(105):
        append_entry(actor_id=maintainer.pk, operation="bench_note", object_type="test", object_id=str(n),
                     packet_id=None, hashes={}, details={"n": n})  # fmt: skip
    total = AuditEntry.objects.count()
    client = client_for(maintainer)
    first = client.get("/audit/").content.decode()
    assert first.count("<tr data-operation") == 100 and 'id="audit-older"' in first
    assert "100 entries a page" in first
    second = client.get("/audit/", {"page": 2}).content.decode()
    assert second.count("<tr data-operation") == total - 100 and 'id="audit-older"' not in second


def test_the_audit_view_reads_packets_by_title_only(maintainer, annotator_a, annotator_b, adjudicator):
    make_packet(maintainer, annotator_a, annotator_b, adjudicator, title="shown by title")
    client = client_for(maintainer)
    with CaptureQueriesContext(connection) as captured:
        html = client.get("/audit/").content.decode()
    assert "shown by title" in html
    heavy = [q["sql"] for q in captured if '"annotator_packet"."instructions"' in q["sql"]]
    assert heavy == []  # neither the packet filter's list nor the entries read a packet's whole row
    assert 'FROM "annotator_auditentry"' in " ".join(q["sql"] for q in captured)
