"""The union a decision rests on (issue 23, found after the sealed rows): an agreed item's
value is what publishing writes into the adjudicated ground truth, and every item is what the
adjudicator decides on. With the triggers in place an UPDATE or DELETE of a union or a union
item is refused (SQLite here, PostgreSQL on the suite's PostgreSQL pass); with them dropped,
a change to any column is an ``integrity_error`` on the union, the decision and the publish
routes, and ``verify_integrity`` names the union."""

from __future__ import annotations

import json

import pytest

from annotator.models import AuditEntry, GroundTruthVersion, Union, UnionItem
from annotator.reads.integrity import describe
from tests.factories import client_for
from tests.integrity.tampering import refused, remove, tamper, triggers_off, verify

pytestmark = pytest.mark.django_db

CUT = {"verb": "cut", "nouns": ["bagel"], "start_frame": 1, "end_frame": 2}
# (row, column, new value): every sealed column of the union and of an agreed item.
COLUMNS = [
    ("item", "a_value", CUT),
    ("item", "b_value", CUT),
    ("item", "status", "conflicting"),
    ("item", "a_index", 7),
    ("item", "b_index", 7),
    ("item", "position", 99),
    ("item", "differing_fields", ["verb"]),
    ("item", "boundary_deltas", {"start_frame": 40}),
    ("union", "ledger_a_sha256", "0" * 64),
    ("union", "ledger_b_sha256", "0" * 64),
    ("union", "scorer_id", "another-scorer"),
]


def agreed_item(packet) -> UnionItem:
    return UnionItem.objects.filter(union__packet=packet, status="agreed").order_by("position").first()


def assert_integrity_error(response) -> None:
    assert response.status_code == 500, (response.status_code, response.content[:300])
    assert response.json()["error"]["code"] == "integrity_error"


def test_untouched_union_reads_and_verifies(packet, adjudicated, adjudicator):
    client = client_for(adjudicator)
    assert client.get(f"/api/packets/{packet.pk}/union/").status_code == 200
    preview = client.get(f"/api/packets/{packet.pk}/publish/")
    assert preview.status_code == 200 and preview.json()["unchanged"], preview.content[:300]
    code, out = verify()
    assert code == 0, out


@pytest.mark.parametrize(("row", "column", "value"), COLUMNS, ids=[f"{r}.{c}" for r, c, _ in COLUMNS])
def test_each_union_column_is_an_integrity_error_and_named(packet, adjudicated, adjudicator, row, column, value):
    item = agreed_item(packet)
    obj = item if row == "item" else Union.objects.get(pk=item.union_id)
    before = AuditEntry.objects.filter(operation="integrity_error").count()
    versions = GroundTruthVersion.objects.count()
    tamper(obj, **{column: value})
    client = client_for(adjudicator)
    assert_integrity_error(client.get(f"/api/packets/{packet.pk}/union/"))
    assert_integrity_error(client.get(f"/api/packets/{packet.pk}/publish/"))
    assert_integrity_error(client.post(f"/api/packets/{packet.pk}/publish/"))
    assert GroundTruthVersion.objects.count() == versions  # nothing published from it
    assert AuditEntry.objects.filter(operation="integrity_error").count() > before
    code, out = verify()
    assert code == 1, out
    union = Union.objects.get(pk=item.union_id)
    assert f"PROBLEM {describe(union)}: its items or columns differ from the seal" in out, out


def test_a_decision_is_not_taken_on_a_changed_item(packet, frozen, adjudicator):
    client = client_for(adjudicator)
    assert client.post(f"/api/packets/{packet.pk}/union/").status_code == 200
    item = UnionItem.objects.filter(union__packet=packet).exclude(status="agreed").order_by("position").first()
    tamper(item, a_value=CUT)
    response = client.post(
        f"/api/packets/{packet.pk}/union/items/{item.position}/decision/",
        {"action": "take_a", "rationale": "checked", "replaces": None},
        content_type="application/json",
    )
    assert_integrity_error(response)
    assert not hasattr(UnionItem.objects.get(pk=item.pk), "decision")


def test_union_items_added_or_removed_are_named(packet, adjudicated):
    item = agreed_item(packet)
    union = Union.objects.get(pk=item.union_id)
    with triggers_off(UnionItem._meta.db_table):
        UnionItem.objects.bulk_create([UnionItem(union=union, position=50, status="agreed", a_value=CUT, b_value=CUT)])
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(union)}: its items or columns differ" in out, out
    with triggers_off(UnionItem._meta.db_table) as cursor:
        cursor.execute("DELETE FROM annotator_unionitem WHERE position = 50 AND union_id = %s", [union.pk])
    assert verify()[0] == 0
    remove(item)
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(union)}: its items or columns differ" in out, out


def test_a_deleted_union_is_named(packet, frozen, adjudicator):
    assert client_for(adjudicator).post(f"/api/packets/{packet.pk}/union/").status_code == 200
    union = Union.objects.get(packet=packet)
    with triggers_off(UnionItem._meta.db_table) as cursor:
        cursor.execute("DELETE FROM annotator_unionitem WHERE union_id = %s", [union.pk])
    remove(union)
    code, out = verify()
    assert code == 1 and f"PROBLEM union {union.pk}: recorded in the audit log, now missing (deleted)" in out, out


def test_triggers_refuse_every_update_and_delete_of_union_rows(packet, adjudicated):
    item = agreed_item(packet)
    for column, value in (("a_value", json.dumps(CUT)), ("status", "conflicting"), ("position", 99)):
        refused(f"UPDATE annotator_unionitem SET {column} = %s WHERE id = %s", [value, item.pk])
    refused("DELETE FROM annotator_unionitem WHERE id = %s", [item.pk])
    refused("UPDATE annotator_union SET ledger_a_sha256 = %s WHERE id = %s", ["0" * 64, item.union_id])
    refused("DELETE FROM annotator_union WHERE id = %s", [item.union_id])
    code, out = verify()
    assert code == 0, out
