"""Changing stored rows the way someone with write access to the database would:
past the ORM guards and with the frozen-row triggers switched off for the one
statement (PostgreSQL: ``session_replication_role = replica``, as a superuser can;
SQLite: the triggers dropped and created again). Everything happens inside the test's transaction."""

from __future__ import annotations

import io
import json
from contextlib import contextmanager

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet

from annotator.base.canonical import sha256_hex


@contextmanager
def triggers_off(table: str):
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
            yield cursor
            cursor.execute("SET LOCAL session_replication_role = DEFAULT")
        else:
            cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table])
            saved = cursor.fetchall()
            for name, _ in saved:
                cursor.execute(f'DROP TRIGGER "{name}"')
            yield cursor
            for _, sql in saved:
                cursor.execute(sql)


def tamper(obj, **columns) -> None:
    """UPDATE the row of ``obj`` with ``columns``, bypassing every guard."""
    with triggers_off(obj._meta.db_table):
        QuerySet(model=type(obj)).filter(pk=obj.pk).update(**columns)


def remove(obj) -> None:
    """DELETE the row of ``obj`` with plain SQL, bypassing every guard."""
    with triggers_off(obj._meta.db_table) as cursor:
        cursor.execute(f"DELETE FROM {obj._meta.db_table} WHERE id = %s", [obj.pk])


def edited_events(canonical_json: str, **changes) -> str:
    """The document with its first event changed, in canonical form (sorted, compact)."""
    document = json.loads(canonical_json)
    document["events"][0].update(changes)
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def rehashed(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def refused(statement: str, params=()) -> str:
    """The triggers' refusal of ``statement`` (its error text), in a savepoint of its own."""
    with pytest.raises(IntegrityError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)
    assert "frameledger:" in str(caught.value)
    return str(caught.value)


def verify(*args) -> tuple[int, str]:
    """``verify_integrity --no-record`` with ``args``: (its exit code, what it printed)."""
    out = io.StringIO()
    try:
        call_command("verify_integrity", "--no-record", *args, stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def forge_entry(operation: str, obj, *, packet_id=None, hashes: dict, details: dict | None = None, key=None, kid=None):
    """Append an audit entry for ``obj`` as someone with the database but without the signing
    key would: at the chain head, linked and hashed exactly as FrameLedger does (plain
    SHA-256), unsigned, or signed with ``key`` (their own Ed25519 key) under the key id ``kid``."""
    from django.utils import timezone

    from annotator.models import AuditEntry
    from annotator.models.audit import GENESIS_SHA256, entry_sha256

    head = AuditEntry.objects.order_by("-seq").values_list("seq", "sha256").first()
    fields = {
        "seq": head[0] + 1 if head else 1,
        "prev_sha256": head[1] if head else GENESIS_SHA256,
        "at": timezone.now(),
        "actor_id": None,
        "operation": operation,
        "object_type": obj._meta.label,
        "object_id": str(obj.pk),
        "packet_id": packet_id,
        "hashes": json.loads(json.dumps(hashes)),
        "details": json.loads(json.dumps(details or {})),
    }
    sha256 = entry_sha256(**fields)
    signed = {}
    if key is not None:
        signed = {"key_id": kid, "signature": key.sign(b"frameledger audit entry v1\n" + sha256.encode()).hex()}
    return AuditEntry.objects.create(**fields, sha256=sha256, **signed)
