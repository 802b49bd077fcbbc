from __future__ import annotations

from django.db import models

from annotator.models import AuditEntry, Packet


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
    return AuditEntry.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        operation=operation,
        object_type=obj._meta.label,
        object_id=str(obj.pk),
        packet=packet,
        hashes=hashes or {},
        details=details or {},
    )
