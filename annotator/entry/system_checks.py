"""System checks for the environment FrameLedger needs (``manage.py check``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.checks import Error, Tags, register


def ffmpeg_binary() -> str | None:
    """The FFmpeg executable (the one the imageio-ffmpeg wheel ships), or None."""
    try:
        import imageio_ffmpeg

        path = imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # the package raises RuntimeError when no binary is usable
        return None
    return path if path and os.access(path, os.X_OK) else None


@register()
def check_media_tools(app_configs, **kwargs):
    errors = []
    try:
        import av  # noqa: F401
    except ImportError:
        errors.append(
            Error(
                "PyAV (the 'av' package) is not importable", hint="pip install -r requirements.txt", id="annotator.E001"
            )
        )
    if ffmpeg_binary() is None:
        errors.append(Error("ffmpeg not found", hint="install imageio-ffmpeg (requirements.txt)", id="annotator.E002"))
    return errors


@register()
def check_media_root(app_configs, **kwargs):
    """MEDIA_ROOT must exist (or be creatable) and accept a new file."""
    root = Path(settings.MEDIA_ROOT)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root):
            pass
    except OSError as exc:
        return [
            Error(f"MEDIA_ROOT {root} is not writable: {exc}", hint="set FRAMELEDGER_MEDIA_ROOT", id="annotator.E003")
        ]
    return []


# The frozen-row triggers of migrations 0005, 0014, 0018 and 0019, as (table, trigger). A later migration that
# rebuilds one of these tables on SQLite drops its triggers with it: E010 notices.
EXPECTED_TRIGGERS = {
    "postgresql": {
        ("annotator_ledger", "frameledger_frozen_ledger"),
        ("annotator_groundtruthversion", "frameledger_immutable"),
        ("annotator_auditentry", "frameledger_immutable"),
        # migration 0014_sealed_rows
        ("annotator_ledgerevent", "frameledger_frozen_event"),
        ("annotator_submission", "frameledger_immutable"),
        ("annotator_scoringrun", "frameledger_scoring_run"),
        ("annotator_submissionscore", "frameledger_final_score"),
        ("annotator_decision", "frameledger_decision"),
        # migration 0018_sealed_union
        ("annotator_union", "frameledger_immutable"),
        ("annotator_unionitem", "frameledger_immutable"),
        # migration 0019_sealed_bundle_runs
        ("annotator_bundlerun", "frameledger_bundle_run"),
    },
    "sqlite": {
        ("annotator_ledger", "frameledger_frozen_ledger_update"),
        ("annotator_ledger", "frameledger_frozen_ledger_delete"),
        *(
            (table, f"frameledger_{table}_{op}")
            for table in ("annotator_groundtruthversion", "annotator_auditentry")
            for op in ("update", "delete")
        ),
        # migration 0014_sealed_rows
        *(("annotator_ledgerevent", f"frameledger_frozen_event_{op}") for op in ("insert", "update", "delete")),
        ("annotator_submission", "frameledger_annotator_submission_update"),
        ("annotator_submission", "frameledger_annotator_submission_delete"),
        ("annotator_scoringrun", "frameledger_scoring_run_update"),
        ("annotator_scoringrun", "frameledger_scoring_run_delete"),
        ("annotator_submissionscore", "frameledger_final_score_update"),
        ("annotator_submissionscore", "frameledger_final_score_delete"),
        ("annotator_decision", "frameledger_decision_update"),
        ("annotator_decision", "frameledger_decision_delete"),
        # migration 0018_sealed_union
        *(
            (table, f"frameledger_{table}_{op}")
            for table in ("annotator_union", "annotator_unionitem")
            for op in ("update", "delete")
        ),
        # migration 0019_sealed_bundle_runs
        ("annotator_bundlerun", "frameledger_bundle_run_update"),
        ("annotator_bundlerun", "frameledger_bundle_run_delete"),
    },
}


def installed_triggers(connection) -> set[tuple[str, str]]:
    """(table, trigger) pairs named ``frameledger*`` that are enabled."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE t.tgname LIKE 'frameledger%%' AND NOT t.tgisinternal AND t.tgenabled <> 'D'"
            )
        else:
            cursor.execute(
                "SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'frameledger%'"
            )
        return set(cursor.fetchall())


def _fully_migrated(connection) -> bool:
    """The schema is the one the code expects (nothing left to apply). Before ``migrate``
    it may not be, and the integrity check would query columns that do not exist yet."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    return not executor.migration_plan(executor.loader.graph.leaf_nodes())


@register(Tags.database)
def check_integrity(app_configs, databases=None, **kwargs):
    """E010 frozen-row triggers missing or disabled; E011 stored data fails verification.

    Tagged ``database``: it reads every frozen row, so it runs with
    ``manage.py check --database default`` (and before ``migrate``, when the schema is
    already current), not on every command.
    """
    from django.db import connections

    from annotator.reads.verify import verify_all

    errors = []
    for alias in databases or []:
        connection = connections[alias]
        if alias != "default" or not _fully_migrated(connection):
            continue
        missing = EXPECTED_TRIGGERS.get(connection.vendor, set()) - installed_triggers(connection)
        if missing:
            names = ", ".join(f"{trigger} on {table}" for table, trigger in sorted(missing))
            errors.append(
                Error(
                    f"frozen-row triggers missing or disabled: {names}",
                    hint="re-create them as annotator/migrations/0005_integrity.py does",
                    id="annotator.E010",
                )
            )
        problems = verify_all().problems
        if problems:
            errors.append(
                Error(
                    f"{len(problems)} integrity problem(s): " + "; ".join(str(p) for p in problems[:5]),
                    hint="run manage.py verify_integrity for the full list",
                    id="annotator.E011",
                )
            )
    return errors
