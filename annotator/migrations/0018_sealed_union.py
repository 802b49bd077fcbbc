"""Triggers for the union of a packet's two frozen ledgers and its items, beside the ones
of ``0005_integrity`` and ``0014_sealed_rows``.

A union is built once from the two frozen ledgers and never changed by FrameLedger; an
agreed item's value is what publishing writes into the adjudicated ground truth, and every
item is what the adjudicator decides on. So every UPDATE and DELETE of ``annotator_union``
and ``annotator_unionitem`` is refused (their content is also covered by the seal the
``build_union`` audit entry records, for when the triggers are dropped).

Self-contained on purpose (no application imports); names start with ``frameledger_`` so
that ``manage.py flush`` on SQLite drops and re-creates them with the others.
"""

from django.db import migrations

TABLES = ("annotator_union", "annotator_unionitem")


def postgresql_triggers() -> tuple[list[str], list[str]]:
    # frameledger_refuse_change() comes from 0005_integrity.
    create = [
        f"CREATE TRIGGER frameledger_immutable BEFORE UPDATE OR DELETE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_change()"
        for table in TABLES
    ]
    drop = [f"DROP TRIGGER IF EXISTS frameledger_immutable ON {table}" for table in TABLES]
    return create, drop


def sqlite_triggers() -> tuple[list[str], list[str]]:
    names = [(f"frameledger_{table}_{op.lower()}", op, table) for table in TABLES for op in ("UPDATE", "DELETE")]
    create = [
        f"CREATE TRIGGER {name} BEFORE {op} ON {table} FOR EACH ROW "
        f"BEGIN SELECT RAISE(ABORT, 'frameledger: {table} rows are immutable; {op} refused'); END"
        for name, op, table in names
    ]
    drop = [f"DROP TRIGGER IF EXISTS {name}" for name, _, _ in names]
    return create, drop


def vendor_triggers(vendor: str) -> tuple[list[str], list[str]]:
    if vendor == "postgresql":
        return postgresql_triggers()
    if vendor == "sqlite":
        return sqlite_triggers()
    raise NotImplementedError(f"no frozen-row triggers for database vendor {vendor!r}")


def create_triggers(apps, schema_editor):
    for statement in vendor_triggers(schema_editor.connection.vendor)[0]:
        schema_editor.execute(statement, params=None)


def drop_triggers(apps, schema_editor):
    for statement in vendor_triggers(schema_editor.connection.vendor)[1]:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0017_derived_jobs"),
    ]

    operations = [
        migrations.RunPython(create_triggers, drop_triggers),
    ]
