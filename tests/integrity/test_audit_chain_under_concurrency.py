"""The audit log is one hash chain even with many writers at once: the append holds a
lock (PostgreSQL advisory lock; SQLite's write lock), so no two entries share a parent
and none is refused for a taken ``seq``. Runs on whichever database the suite uses
(SQLite by default, PostgreSQL with ``DATABASE_URL``)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from annotator.models import AuditEntry
from annotator.models.audit_log import append_entry
from annotator.reads.verify import audit_chain_problems

WRITERS = 8
ENTRIES_EACH = 10


def append_many(start: threading.Barrier, number: int, errors: list) -> None:
    try:
        start.wait()
        for i in range(ENTRIES_EACH):
            with transaction.atomic():
                append_entry(
                    actor_id=None, operation="concurrent_test", object_type="test.Writer", object_id=str(number),
                    packet_id=None, hashes={}, details={"i": i},
                )  # fmt: skip
    except BaseException as error:  # noqa: BLE001  (reported by the test)
        errors.append(error)
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_never_fork_the_audit_chain():
    before = AuditEntry.objects.count()
    start, errors = threading.Barrier(WRITERS), []
    threads = [threading.Thread(target=append_many, args=(start, n, errors)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    seqs = list(AuditEntry.objects.order_by("seq").values_list("seq", flat=True))
    assert len(seqs) == before + WRITERS * ENTRIES_EACH
    assert seqs == list(range(1, len(seqs) + 1))
    problems, head = audit_chain_problems()
    assert problems == [], [str(p) for p in problems]
    assert head[0] == len(seqs), connection.vendor
