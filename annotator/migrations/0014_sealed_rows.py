"""Triggers for the rows a score or a ledger rests on, beside the ones of ``0005_integrity``.

Self-contained on purpose (no application imports); names start with ``frameledger_`` so
that ``manage.py flush`` on SQLite drops and re-creates them with the others.

- ``annotator_ledgerevent``: no INSERT, UPDATE or DELETE of an event of a frozen ledger
  (the ledger on either side of an UPDATE), so nothing is added to, changed in or moved
  out of a frozen ledger;
- ``annotator_submission``: every UPDATE and DELETE is refused (bytes kept as uploaded);
- ``annotator_scoringrun``: every DELETE is refused, and every UPDATE but the one that
  finishes the run (``finished_at`` NULL -> set, nothing else changed);
- ``annotator_submissionscore``: every DELETE is refused, and every UPDATE of a score that
  is no longer ``pending`` (the worker writes a pending score once);
- ``annotator_decision``: every DELETE is refused, and every UPDATE that moves a decision to
  another union item. Decisions stay revisable (publishing again makes a new version), so
  their content is covered by the seal each ``decide_item`` audit entry records instead.
"""

from django.db import migrations

RUN_COLUMNS = (
    "version_id", "scorer_id", "params", "ground_truth_sha256", "scorer_code_sha256", "job_id", "total",
    "created_by_id", "created_at",
)  # fmt: skip


def postgresql_triggers() -> tuple[list[str], list[str]]:
    run_changed = " OR ".join(f"NEW.{c}::text IS DISTINCT FROM OLD.{c}::text" for c in RUN_COLUMNS)
    create = [
        """
        CREATE FUNCTION frameledger_refuse_frozen_event() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP <> 'INSERT' AND EXISTS (
                SELECT 1 FROM annotator_ledger WHERE id = OLD.ledger_id AND frozen_at IS NOT NULL
            ) THEN
                RAISE EXCEPTION 'frameledger: ledger % is frozen; % of its events refused', OLD.ledger_id, TG_OP
                    USING ERRCODE = 'restrict_violation';
            END IF;
            IF TG_OP <> 'DELETE' AND EXISTS (
                SELECT 1 FROM annotator_ledger WHERE id = NEW.ledger_id AND frozen_at IS NOT NULL
            ) THEN
                RAISE EXCEPTION 'frameledger: ledger % is frozen; % of its events refused', NEW.ledger_id, TG_OP
                    USING ERRCODE = 'restrict_violation';
            END IF;
            IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
            RETURN NEW;
        END $$""",
        """
        CREATE TRIGGER frameledger_frozen_event BEFORE INSERT OR UPDATE OR DELETE ON annotator_ledgerevent
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_frozen_event()""",
        """
        CREATE TRIGGER frameledger_immutable BEFORE UPDATE OR DELETE ON annotator_submission
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_change()""",
        f"""
        CREATE FUNCTION frameledger_refuse_run_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' OR OLD.finished_at IS NOT NULL OR {run_changed} THEN
                RAISE EXCEPTION 'frameledger: scoring run % is kept as started; % refused', OLD.id, TG_OP
                    USING ERRCODE = 'restrict_violation';
            END IF;
            RETURN NEW;
        END $$""",
        """
        CREATE TRIGGER frameledger_scoring_run BEFORE UPDATE OR DELETE ON annotator_scoringrun
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_run_change()""",
        """
        CREATE FUNCTION frameledger_refuse_score_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' OR OLD.status <> 'pending' THEN
                RAISE EXCEPTION 'frameledger: score % is final; % refused', OLD.id, TG_OP
                    USING ERRCODE = 'restrict_violation';
            END IF;
            RETURN NEW;
        END $$""",
        """
        CREATE TRIGGER frameledger_final_score BEFORE UPDATE OR DELETE ON annotator_submissionscore
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_score_change()""",
        """
        CREATE FUNCTION frameledger_refuse_decision_move() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' OR NEW.item_id IS DISTINCT FROM OLD.item_id OR NEW.id <> OLD.id THEN
                RAISE EXCEPTION 'frameledger: decision % is kept on its item; % refused', OLD.id, TG_OP
                    USING ERRCODE = 'restrict_violation';
            END IF;
            RETURN NEW;
        END $$""",
        """
        CREATE TRIGGER frameledger_decision BEFORE UPDATE OR DELETE ON annotator_decision
        FOR EACH ROW EXECUTE FUNCTION frameledger_refuse_decision_move()""",
    ]
    drop = [
        "DROP TRIGGER IF EXISTS frameledger_frozen_event ON annotator_ledgerevent",
        "DROP TRIGGER IF EXISTS frameledger_immutable ON annotator_submission",
        "DROP TRIGGER IF EXISTS frameledger_scoring_run ON annotator_scoringrun",
        "DROP TRIGGER IF EXISTS frameledger_final_score ON annotator_submissionscore",
        "DROP TRIGGER IF EXISTS frameledger_decision ON annotator_decision",
        "DROP FUNCTION IF EXISTS frameledger_refuse_frozen_event()",
        "DROP FUNCTION IF EXISTS frameledger_refuse_run_change()",
        "DROP FUNCTION IF EXISTS frameledger_refuse_score_change()",
        "DROP FUNCTION IF EXISTS frameledger_refuse_decision_move()",
    ]
    return create, drop


def _sqlite(name: str, when: str, message: str, op: str, table: str) -> str:
    condition = f" WHEN {when}" if when else ""
    return (
        f"CREATE TRIGGER {name} BEFORE {op} ON {table} FOR EACH ROW{condition} "
        f"BEGIN SELECT RAISE(ABORT, 'frameledger: {message}'); END"
    )


def sqlite_triggers() -> tuple[list[str], list[str]]:
    frozen = "(SELECT frozen_at FROM annotator_ledger WHERE id = {}.ledger_id) IS NOT NULL"
    run_changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in RUN_COLUMNS)
    specs = [
        ("frameledger_frozen_event_insert", frozen.format("NEW"), "ledger is frozen; INSERT of an event refused",
         "INSERT", "annotator_ledgerevent"),
        ("frameledger_frozen_event_update", f"{frozen.format('OLD')} OR {frozen.format('NEW')}",
         "ledger is frozen; UPDATE of its events refused", "UPDATE", "annotator_ledgerevent"),
        ("frameledger_frozen_event_delete", frozen.format("OLD"), "ledger is frozen; DELETE of its events refused",
         "DELETE", "annotator_ledgerevent"),
        ("frameledger_annotator_submission_update", "", "annotator_submission rows are immutable; UPDATE refused",
         "UPDATE", "annotator_submission"),
        ("frameledger_annotator_submission_delete", "", "annotator_submission rows are immutable; DELETE refused",
         "DELETE", "annotator_submission"),
        ("frameledger_scoring_run_update", f"OLD.finished_at IS NOT NULL OR NEW.id IS NOT OLD.id OR {run_changed}",
         "scoring run is kept as started; UPDATE refused", "UPDATE", "annotator_scoringrun"),
        ("frameledger_scoring_run_delete", "", "scoring run is kept; DELETE refused", "DELETE", "annotator_scoringrun"),
        ("frameledger_final_score_update", "OLD.status <> 'pending'", "score is final; UPDATE refused", "UPDATE",
         "annotator_submissionscore"),
        ("frameledger_final_score_delete", "", "score is kept; DELETE refused", "DELETE", "annotator_submissionscore"),
        ("frameledger_decision_update", "NEW.item_id IS NOT OLD.item_id OR NEW.id IS NOT OLD.id",
         "decision is kept on its item; UPDATE refused", "UPDATE", "annotator_decision"),
        ("frameledger_decision_delete", "", "decision is kept; DELETE refused", "DELETE", "annotator_decision"),
    ]  # fmt: skip
    create = [_sqlite(*spec) for spec in specs]
    drop = [f"DROP TRIGGER IF EXISTS {spec[0]}" for spec in specs]
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
        ("annotator", "0013_bundle_run_heartbeat"),
    ]

    operations = [
        migrations.RunPython(create_triggers, drop_triggers),
    ]
