"""Triggers for an executable bundle's run, beside the ones of ``0005_integrity``,
``0014_sealed_rows`` and ``0018_sealed_union``.

The leaderboard shows a bundle run beside the agent's reward (its kind, reference flag,
outcome, stage timings). So, on ``annotator_bundlerun``:

- every DELETE is refused (FrameLedger never deletes a run);
- every UPDATE of a run that has ended (``done`` or ``error``) is refused;
- an UPDATE of a run still queued or running may write only the worker's columns (status,
  outcome, stages, enforcement, submission, score, finish time, worker, heartbeat), like a
  pending score: the columns fixed at submission (version, label, bundle and its SHA-256,
  reference flag, device, queue, limits, who, when) are refused.

Their content is also covered by the seals ``submit_bundle`` (the submitted columns) and
``finish_bundle_run`` (every column, once the run has ended) record, for when the triggers
are dropped.

Self-contained on purpose (no application imports); names start with ``frameledger_`` so
that ``manage.py flush`` on SQLite drops and re-creates them with the others.
"""

from django.db import migrations

SUBMITTED_COLUMNS = (
    "id", "version_id", "label", "bundle", "bundle_sha256", "reference", "device", "queue", "limits",
    "created_by_id", "created_at",
)  # fmt: skip
FINAL = "('done', 'error')"


def postgresql_triggers() -> tuple[list[str], list[str]]:
    # bytea compared as it is (no text copy of the bundle on every heartbeat), the rest as text.
    changed = " OR ".join(
        f"NEW.{c} IS DISTINCT FROM OLD.{c}" if c == "bundle" else f"NEW.{c}::text IS DISTINCT FROM OLD.{c}::text"
        for c in SUBMITTED_COLUMNS
    )
    create = [
        f"""
        CREATE FUNCTION frameledger_refuse_bundle_run_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' OR OLD.status IN {FINAL} OR {changed} THEN
                RAISE EXCEPTION 'frameledger: bundle run % is kept as submitted and as ended; % refused',
                    OLD.id, TG_OP USING ERRCODE = 'restrict_violation';
            END IF;
            RETURN NEW;
        END $$""",
        """
        CREATE TRIGGER frameledger_bundle_run BEFORE UPDATE OR DELETE ON annotator_bundlerun
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_bundle_run_change()""",
    ]
    drop = [
        "DROP TRIGGER IF EXISTS frameledger_bundle_run ON annotator_bundlerun",
        "DROP FUNCTION IF EXISTS frameledger_refuse_bundle_run_change()",
    ]
    return create, drop


def sqlite_triggers() -> tuple[list[str], list[str]]:
    changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in SUBMITTED_COLUMNS)
    specs = [
        ("frameledger_bundle_run_update", f"OLD.status IN {FINAL} OR {changed}",
         "bundle run is kept as submitted and as ended; UPDATE refused", "UPDATE"),
        ("frameledger_bundle_run_delete", "", "bundle run is kept; DELETE refused", "DELETE"),
    ]  # fmt: skip
    create = [
        f"CREATE TRIGGER {name} BEFORE {op} ON annotator_bundlerun FOR EACH ROW{f' WHEN {when}' if when else ''} "
        f"BEGIN SELECT RAISE(ABORT, 'frameledger: {message}'); END"
        for name, when, message, op in specs
    ]
    drop = [f"DROP TRIGGER IF EXISTS {name}" for name, _, _, _ in specs]
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
        ("annotator", "0018_sealed_union"),
    ]

    operations = [
        migrations.RunPython(create_triggers, drop_triggers),
    ]
