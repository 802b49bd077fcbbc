"""A guard for rows that must never change once written (frozen ledgers, versions)."""

from django.db import models


class ImmutableRowError(Exception):
    """Raised when code tries to update or delete a row that is immutable."""


class ImmutableModel(models.Model):
    """A row that can be inserted once and then never updated or deleted."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRowError(f"{type(self).__name__} {self.pk} is immutable")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRowError(f"{type(self).__name__} {self.pk} is immutable")
