"""Item 2 of issue 10: no ORM path and no stray SQL changes or deletes a frozen row.

ORM guards are checked on whatever database the suite runs on; the triggers once on
SQLite (the embedded default) and once on PostgreSQL (``postgres`` marker, run with
``DATABASE_URL=postgres://...``), each refusing an UPDATE and a DELETE by plain SQL."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from annotator.entry.system_checks import EXPECTED_TRIGGERS, installed_triggers
from annotator.models import AuditEntry, GroundTruthVersion, Ledger, LedgerEvent
from annotator.models.immutable import ImmutableRowError
from tests.integrity.conftest import fill_and_freeze

pytestmark = pytest.mark.django_db


def sql(statement: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)


def refused(statement: str, params=()) -> str:
    """The database's refusal of ``statement`` (its error text)."""
    with pytest.raises(IntegrityError) as caught:
        sql(statement, params)
    return str(caught.value)


def test_model_save_on_a_frozen_ledger_is_refused(frozen):
    ledger = Ledger.objects.get(pk=frozen["A"].pk)
    ledger.attestation = "changed after the freeze"
    with pytest.raises(ImmutableRowError, match="is frozen"):
        ledger.save()
    with pytest.raises(ImmutableRowError):
        ledger.delete()
    assert Ledger.objects.get(pk=ledger.pk).attestation == frozen["A"].attestation


def test_queryset_update_and_delete_of_frozen_ledgers_are_refused(frozen):
    with pytest.raises(ImmutableRowError, match="canonical_json"):
        Ledger.objects.filter(pk=frozen["A"].pk).update(canonical_json="{}")
    with pytest.raises(ImmutableRowError):
        Ledger.objects.filter(pk=frozen["A"].pk).delete()
    with pytest.raises(ImmutableRowError), transaction.atomic():  # bulk_update takes no savepoint
        Ledger.objects.bulk_update([frozen["A"]], ["sha256"])
    assert Ledger.objects.get(pk=frozen["A"].pk).canonical_json == frozen["A"].canonical_json


def test_queryset_writes_to_open_ledgers_still_work(packet):
    # Only frozen ledgers are guarded: the editing flows keep their bulk writes.
    assert Ledger.objects.filter(packet=packet).update(version=3) == 2


@pytest.mark.parametrize("model", [GroundTruthVersion, AuditEntry])
def test_queryset_update_and_delete_of_versions_and_audit_entries_are_refused(model, adjudicated):
    rows = model.objects.all()
    before = rows.count()
    with pytest.raises(ImmutableRowError):
        rows.update(sha256="0" * 64)
    with pytest.raises(ImmutableRowError):
        rows.delete()
    assert model.objects.count() == before


def test_freezing_itself_passes_the_trigger(packet, annotator_a):
    ledger = fill_and_freeze(packet, "A", annotator_a, [("take", ["cup"], 1, 5)])
    assert Ledger.objects.get(pk=ledger.pk).is_frozen


def check_triggers_refuse_frozen_rows(frozen, adjudicated) -> dict[str, str]:
    ledger, version = frozen["A"], adjudicated
    entry = AuditEntry.objects.order_by("seq").first()
    errors = {
        "ledger UPDATE": refused("UPDATE annotator_ledger SET canonical_json = '{}' WHERE id = %s", [ledger.pk]),
        "ledger unfreeze": refused("UPDATE annotator_ledger SET frozen_at = NULL WHERE id = %s", [ledger.pk]),
        "ledger DELETE": refused("DELETE FROM annotator_ledger WHERE id = %s", [ledger.pk]),
        "version UPDATE": refused(
            "UPDATE annotator_groundtruthversion SET sha256 = %s WHERE id = %s", ["0" * 64, version.pk]
        ),
        "version DELETE": refused("DELETE FROM annotator_groundtruthversion WHERE id = %s", [version.pk]),
        "audit UPDATE": refused("UPDATE annotator_auditentry SET operation = 'x' WHERE id = %s", [entry.pk]),
        "audit DELETE": refused("DELETE FROM annotator_auditentry WHERE id = %s", [entry.pk]),
    }
    for message in errors.values():
        assert "frameledger:" in message
    # Nothing changed; an open ledger's row and a frozen ledger's bookkeeping stay writable.
    assert Ledger.objects.get(pk=ledger.pk).canonical_json == ledger.canonical_json
    assert GroundTruthVersion.objects.get(pk=version.pk).sha256 == version.sha256
    assert AuditEntry.objects.get(pk=entry.pk).operation == entry.operation
    sql("UPDATE annotator_ledger SET updated_at = updated_at WHERE id = %s", [ledger.pk])
    return errors


def test_sqlite_triggers_refuse_update_and_delete_of_frozen_rows(frozen, adjudicated):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite triggers; this run uses PostgreSQL")
    check_triggers_refuse_frozen_rows(frozen, adjudicated)


@pytest.mark.postgres
def test_postgres_triggers_refuse_update_and_delete_of_frozen_rows(frozen, adjudicated):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (the CI run does)")
    check_triggers_refuse_frozen_rows(frozen, adjudicated)


def test_events_of_a_frozen_ledger_refuse_queryset_writes_too(frozen):
    # Events feed nothing after the freeze (the canonical JSON does), but stay untouched.
    events = LedgerEvent.objects.filter(ledger=frozen["A"])
    assert events.count() == 3
    for event in events:
        with pytest.raises(ImmutableRowError):
            event.delete()


@pytest.mark.django_db(transaction=True)
def test_flush_empties_a_database_with_frozen_rows_and_keeps_its_triggers(frozen, adjudicated):
    call_command("flush", interactive=False, verbosity=0)
    assert not Ledger.objects.exists()
    assert not GroundTruthVersion.objects.exists()
    assert not AuditEntry.objects.exists()
    assert EXPECTED_TRIGGERS[connection.vendor] <= installed_triggers(connection)
