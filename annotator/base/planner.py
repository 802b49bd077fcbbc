"""The query planner's statistics, refreshed after a bulk write.

PostgreSQL plans from the statistics ``ANALYZE`` gathers; its autovacuum daemon gathers them
in time, but a server that runs with it off (or one that has not caught up after a large
write, or a fresh ``pg_restore``) plans a table of 10,000 new rows as if it held one. The
leaderboard's "newest final score of each submission" (an anti-join) is then run as a nested
loop over every pair of scores: 25 s for 10,000 scores instead of 28 ms. So the writes that
add thousands of rows at once (a scoring run's end, a batch of submissions) refresh the
statistics of the tables they grew. ``ANALYZE`` reads a sample of at most 30,000 rows per
table: tens of milliseconds, once per bulk write. Other databases have nothing to refresh.
"""

from __future__ import annotations

import logging

from django.db import connection

logger = logging.getLogger(__name__)


def refresh_statistics(*models) -> None:
    """``ANALYZE`` the tables of ``models`` (PostgreSQL only; a failure is logged, never raised:
    statistics make plans faster, never answers different)."""
    if connection.vendor != "postgresql" or not models:
        return
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {tables}")
    except Exception:  # a lock wait cut short, a read-only replica: the plans stay as they were
        logger.warning("could not refresh the planner's statistics of %s", tables, exc_info=True)
