"""``manage.py flush`` that also works on SQLite with the frozen-row triggers in place.

Django's flush empties every table; on PostgreSQL it uses TRUNCATE, which fires no
row trigger. SQLite has no TRUNCATE: flush runs ``DELETE FROM`` per table, which the
triggers of migration 0004 refuse for frozen ledgers, versions and audit entries. So
here, on SQLite only, the triggers are dropped, the tables emptied and the very same
trigger definitions (read back from ``sqlite_master``) created again, all in one
transaction: a failed flush leaves the triggers as they were.

Emptying the whole database is the operator's reset (the test suite runs it between
transactional tests); it is not a path to change or remove a single frozen row.
"""

from __future__ import annotations

from django.core.management.commands import flush
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from annotator.reads.anchors import set_aside


class Command(flush.Command):
    def handle(self, **options):
        connection = connections[options.get("database", DEFAULT_DB_ALIAS)]
        set_aside("flushed")  # the audit chain starts again: its anchored heads are kept aside
        if connection.vendor != "sqlite":
            return super().handle(**options)
        with transaction.atomic(using=connection.alias):
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'frameledger%'"
                )
                triggers = cursor.fetchall()
                for name, _ in triggers:
                    cursor.execute(f'DROP TRIGGER "{name}"')
            result = super().handle(**options)
            with connection.cursor() as cursor:
                for _, sql in triggers:
                    cursor.execute(sql)
        return result
