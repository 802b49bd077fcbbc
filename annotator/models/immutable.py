"""Guards for rows that must never change once written (frozen ledgers, versions, audit).

Three layers refuse a change, from the outside in:

1. ``Model.save()`` / ``Model.delete()`` on the instance (``ImmutableModel``; the
   ledger's own ``save`` once it is frozen);
2. ``QuerySet.update()`` / ``QuerySet.delete()`` (``ImmutableQuerySet``,
   ``FrozenLedgerQuerySet``), which never call ``save``;
3. database triggers (migration ``0005_integrity``) on PostgreSQL and SQLite, which
   refuse an UPDATE or DELETE from any path, raw SQL included.

The first two give a clear Python error early; the third is the one that holds.
"""

from django.db import models

from annotator.models.checked import CheckedModel


class ImmutableRowError(Exception):
    """Raised when code tries to update or delete a row that is immutable."""


class ImmutableQuerySet(models.QuerySet):
    """A queryset whose rows can be read and inserted, never updated or deleted."""

    def update(self, **kwargs):
        raise ImmutableRowError(f"{self.model.__name__} rows are immutable; QuerySet.update() is refused")

    def delete(self):
        raise ImmutableRowError(f"{self.model.__name__} rows are immutable; QuerySet.delete() is refused")

    # bulk_update() goes through update(); _raw_delete() is what delete()'s fast path uses.
    def _raw_delete(self, using):
        raise ImmutableRowError(f"{self.model.__name__} rows are immutable; deletion is refused")


class ImmutableModel(CheckedModel):
    """A row that can be inserted once and then never updated or deleted."""

    objects = ImmutableQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRowError(f"{type(self).__name__} {self.pk} is immutable")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRowError(f"{type(self).__name__} {self.pk} is immutable")
