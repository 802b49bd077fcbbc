"""Tamper evidence: the audit hash chain, the version manifest hash, and database
triggers that refuse changes to frozen rows.

Self-contained on purpose (no application imports): the entry hash below is a frozen
copy of ``annotator.models.audit.entry_sha256`` as of this migration, and the trigger
SQL is written out for each vendor.

Triggers (names start with ``frameledger_``):

- ``annotator_ledger``: once ``frozen_at`` is set, an UPDATE that changes a frozen
  column (content, hash, attestation, freeze time, version, packet, side, annotator)
  and any DELETE are refused. The freeze itself (``frozen_at`` NULL -> set) passes.
- ``annotator_groundtruthversion`` and ``annotator_auditentry``: every UPDATE and
  DELETE is refused.

PostgreSQL's TRUNCATE fires no row trigger: emptying whole tables (``manage.py flush``,
which the test suite runs between transactional tests) stays possible for the table
owner. SQLite has no TRUNCATE, so ``manage.py flush`` (annotator's override) drops the
triggers, empties the tables and puts the triggers back in one transaction.
"""

import hashlib
import json
from datetime import UTC

import django.utils.timezone
from django.db import migrations, models

LEDGER_FROZEN_COLUMNS = (
    "canonical_json",
    "sha256",
    "attestation",
    "frozen_at",
    "version",
    "packet_id",
    "side",
    "annotator_id",
)
IMMUTABLE_TABLES = ("annotator_groundtruthversion", "annotator_auditentry")


def _entry_sha256(entry, prev):
    document = {
        "seq": entry.seq,
        "prev_sha256": prev,
        "at": entry.at.astimezone(UTC).isoformat(timespec="microseconds"),
        "actor": entry.actor_id,
        "operation": entry.operation,
        "object_type": entry.object_type,
        "object_id": str(entry.object_id),
        "packet": entry.packet_id,
        "hashes": entry.hashes,
        "details": entry.details,
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chain_existing_entries(apps, schema_editor):
    """Chain the entries written before this migration, oldest first (by id)."""
    AuditEntry = apps.get_model("annotator", "AuditEntry")
    prev = "0" * 64
    for seq, entry in enumerate(AuditEntry.objects.order_by("id").iterator(), start=1):
        entry.seq, entry.prev_sha256 = seq, prev
        entry.sha256 = _entry_sha256(entry, prev)
        AuditEntry.objects.filter(pk=entry.pk).update(seq=seq, prev_sha256=prev, sha256=entry.sha256)
        prev = entry.sha256


def hash_existing_manifests(apps, schema_editor):
    GroundTruthVersion = apps.get_model("annotator", "GroundTruthVersion")
    for version in GroundTruthVersion.objects.all().iterator():
        text = json.dumps(
            version.manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        GroundTruthVersion.objects.filter(pk=version.pk).update(manifest_sha256=digest)


def postgresql_triggers() -> tuple[list[str], list[str]]:
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in LEDGER_FROZEN_COLUMNS)
    create = [
        f"""
        CREATE FUNCTION frameledger_refuse_frozen_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.frozen_at IS NOT NULL THEN
                IF TG_OP = 'DELETE' THEN
                    RAISE EXCEPTION 'frameledger: ledger % is frozen; DELETE refused', OLD.id
                        USING ERRCODE = 'restrict_violation';
                ELSIF {changed} THEN
                    RAISE EXCEPTION 'frameledger: ledger % is frozen; UPDATE of its frozen columns refused', OLD.id
                        USING ERRCODE = 'restrict_violation';
                END IF;
            END IF;
            IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
            RETURN NEW;
        END $$""",
        """
        CREATE TRIGGER frameledger_frozen_ledger BEFORE UPDATE OR DELETE ON annotator_ledger
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_frozen_ledger()""",
        """
        CREATE FUNCTION frameledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'frameledger: % row % is immutable; % refused', TG_TABLE_NAME, OLD.id, TG_OP
                USING ERRCODE = 'restrict_violation';
        END $$""",
    ]
    # The audit chain head, read after taking the chain's advisory lock, in one round trip
    # (a VOLATILE function takes a fresh snapshot per statement: it sees the entry the
    # previous lock holder committed).
    create.append(
        """
        CREATE FUNCTION frameledger_audit_head(lock_key bigint)
        RETURNS TABLE (head_seq bigint, head_sha256 text) LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock(lock_key);
            RETURN QUERY SELECT seq::bigint, sha256::text FROM annotator_auditentry ORDER BY seq DESC LIMIT 1;
        END $$"""
    )
    drop = ["DROP TRIGGER IF EXISTS frameledger_frozen_ledger ON annotator_ledger"]
    for table in IMMUTABLE_TABLES:
        create.append(
            f"CREATE TRIGGER frameledger_immutable BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_change()"
        )
        drop.append(f"DROP TRIGGER IF EXISTS frameledger_immutable ON {table}")
    drop += [
        "DROP FUNCTION IF EXISTS frameledger_refuse_frozen_ledger()",
        "DROP FUNCTION IF EXISTS frameledger_refuse_change()",
        "DROP FUNCTION IF EXISTS frameledger_audit_head(bigint)",
    ]
    return create, drop


def sqlite_triggers() -> tuple[list[str], list[str]]:
    changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in LEDGER_FROZEN_COLUMNS)
    create = [
        f"""
        CREATE TRIGGER frameledger_frozen_ledger_update BEFORE UPDATE ON annotator_ledger
        FOR EACH ROW WHEN OLD.frozen_at IS NOT NULL AND ({changed})
        BEGIN SELECT RAISE(ABORT, 'frameledger: ledger is frozen; UPDATE of its frozen columns refused'); END""",
        """
        CREATE TRIGGER frameledger_frozen_ledger_delete BEFORE DELETE ON annotator_ledger
        FOR EACH ROW WHEN OLD.frozen_at IS NOT NULL
        BEGIN SELECT RAISE(ABORT, 'frameledger: ledger is frozen; DELETE refused'); END""",
    ]
    drop = ["DROP TRIGGER IF EXISTS frameledger_frozen_ledger_update", "DROP TRIGGER IF EXISTS frameledger_frozen_ledger_delete"]
    for table in IMMUTABLE_TABLES:
        for op in ("UPDATE", "DELETE"):
            name = f"frameledger_{table}_{op.lower()}"
            create.append(
                f"CREATE TRIGGER {name} BEFORE {op} ON {table} FOR EACH ROW "
                f"BEGIN SELECT RAISE(ABORT, 'frameledger: {table} rows are immutable; {op} refused'); END"
            )
            drop.append(f"DROP TRIGGER IF EXISTS {name}")
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
        ("annotator", "0004_http_hardening"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="at",
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="seq",
            field=models.PositiveBigIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="prev_sha256",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="auditentry",
            name="sha256",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="groundtruthversion",
            name="manifest_sha256",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddIndex(
            model_name="auditentry",
            index=models.Index(fields=["object_type", "object_id"], name="audit_entry_object"),
        ),
        migrations.RunPython(chain_existing_entries, migrations.RunPython.noop),
        migrations.RunPython(hash_existing_manifests, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="auditentry",
            name="seq",
            field=models.PositiveBigIntegerField(unique=True),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
