"""Appending to the audit log: one hash-chained entry per write operation.

Each entry links to the previous one (``AuditEntry.prev_sha256``). Two writers must
never read the same chain head and both append after it (a fork), so the append
holds a lock until the writer's transaction ends:

- PostgreSQL: a transaction-level advisory lock (``pg_advisory_xact_lock``), taken
  as the last step of the write it describes, so only the tail of each transaction
  is serialized; lock and head read are one call (``frameledger_audit_head``);
- SQLite: the database's own write lock, which the settings take at the start of
  every transaction (``transaction_mode: IMMEDIATE``, also for ``DATABASE_URL=sqlite://``).

``seq`` is unique as well, so even a writer that skipped the lock could not fork the
chain: its insert would fail instead.
"""

from __future__ import annotations

import json

from django.db import connection, models, transaction
from django.utils import timezone

from annotator.base import signing
from annotator.base.anchor_log import anchor_line, append_anchor
from annotator.models import AuditEntry, Packet
from annotator.models.audit import GENESIS_SHA256, entry_sha256

# Any fixed 64-bit number; it names the audit chain's advisory lock on PostgreSQL.
AUDIT_CHAIN_LOCK = 0x4652414D454C4544  # "FRAMELED"


def locked_chain_head() -> tuple[int, str] | None:
    """Take the chain lock (held until the transaction ends) and read the head
    ``(seq, sha256)``, or None for an empty log. Call inside ``atomic``."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One round trip: migration 0004's function locks, then reads with a fresh snapshot.
            cursor.execute("SELECT head_seq, head_sha256 FROM frameledger_audit_head(%s)", [AUDIT_CHAIN_LOCK])
        else:  # the transaction began IMMEDIATE: it holds SQLite's write lock already
            cursor.execute(f"SELECT seq, sha256 FROM {AuditEntry._meta.db_table} ORDER BY seq DESC LIMIT 1")
        row = cursor.fetchone()
    return (row[0], row[1]) if row else None


def record(
    actor,
    operation: str,
    obj: models.Model,
    *,
    packet: Packet | None = None,
    hashes: dict | None = None,
    details: dict | None = None,
) -> AuditEntry:
    """Append one audit entry. Call inside the transaction of the write it describes."""
    return append_entry(
        actor_id=actor.pk if actor is not None and actor.is_authenticated else None,
        operation=operation,
        object_type=obj._meta.label,
        object_id=str(obj.pk),
        packet_id=packet.pk if packet is not None else None,
        hashes=hashes or {},
        details=details or {},
    )


def append_entry(*, actor_id, operation, object_type, object_id, packet_id, hashes, details) -> AuditEntry:
    """Append an entry at the chain head, under the chain lock.

    ``hashes`` and ``details`` are hashed as they will read back from the database
    (a JSON round trip: tuples become lists, keys become strings).
    """
    hashes, details = json.loads(json.dumps(hashes)), json.loads(json.dumps(details))
    # No savepoint of its own: the entry lives or dies with the caller's transaction.
    with transaction.atomic(savepoint=False):
        head = locked_chain_head()
        fields = {
            "seq": head[0] + 1 if head else 1,
            "prev_sha256": head[1] if head else GENESIS_SHA256,
            "at": timezone.now(),
            "actor_id": actor_id,
            "operation": operation,
            "object_type": object_type,
            "object_id": object_id,
            "packet_id": packet_id,
            "hashes": hashes,
            "details": details,
        }
        sha256 = entry_sha256(**fields)
        if fields["seq"] == 1:  # an empty log: the key may be made now (never for a log with entries)
            signing.make_key(head_seq=0)
        key_id, signature = signing.sign(signing.ENTRY_CONTEXT, sha256)
        entry = AuditEntry.objects.create(**fields, sha256=sha256, key_id=key_id, signature=signature)
    # Once committed, the signed head goes out of the database's reach (``base.anchor_log``):
    # an entry cut from the chain's end is then named by verify_integrity.
    line = anchor_line(entry.seq, sha256, f"{operation} {object_type}:{object_id}", key_id, signature)
    transaction.on_commit(lambda: append_anchor(line))
    return entry
