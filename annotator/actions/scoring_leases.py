"""Scoring batch leases: a batch is scored to its end whatever happens to its worker.

A scoring run is sent to Celery as one ``annotator.score_batch`` task per batch of
submissions, and each batch has a row (``ScoringBatch``) that holds its **lease**: an
owner (host, process, random token) and an expiry. A task takes the lease before it
scores (:func:`take_batch_lease`) and renews it while it scores (:class:`BatchLeaseKeeper`,
at most every tenth of the lease period); the last thing it does is mark the batch done.
Every lease change is one conditional ``UPDATE`` of that row, so two tasks for one batch
(a redelivered message beside a re-sent one) never both hold it.

The sweep (``annotator.actions.scoring_sweep``, Celery beat) sends a batch again when its
lease ran out (its worker was killed or stalled) or when it was never taken while no scoring
worker showed any sign of life for a lease period (its message was lost: the broker was
emptied or the task raised before its lease). A duplicate is harmless: scores are written
only while pending, so nothing is scored twice.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from annotator.models import ScoringBatch

SWEEP_OWNER = "sweep"


def lease_seconds() -> float:
    return float(settings.FRAMELEDGER_SCORING_LEASE_SECONDS)


def new_owner() -> str:
    """A lease owner name: host, process and a random token (unique per task run)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def take_batch_lease(batch_id: int, owner: str) -> bool:
    """Take (or keep) the lease on a batch not yet done. False when another owner holds a
    live lease, or the batch is done (scored, or its run ended)."""
    now = timezone.now()
    free = Q(lease_owner__in=["", owner, SWEEP_OWNER]) | Q(lease_expires__isnull=True) | Q(lease_expires__lte=now)
    return bool(
        ScoringBatch.objects.filter(free, pk=batch_id, done_at__isnull=True).update(
            lease_owner=owner, lease_expires=now + timedelta(seconds=lease_seconds()), renewed_at=now
        )
    )


def renew_batch_lease(batch_id: int, owner: str) -> bool:
    """Push the lease's expiry forward; False when ``owner`` no longer holds it (it ran out
    and was handed on: the other task's writes are the same, only while pending)."""
    now = timezone.now()
    return bool(
        ScoringBatch.objects.filter(pk=batch_id, lease_owner=owner, done_at__isnull=True).update(
            lease_expires=now + timedelta(seconds=lease_seconds()), renewed_at=now
        )
    )


def finish_batch(batch_id: int, owner: str) -> None:
    """Mark the batch done: its task went through every result it was given."""
    now = timezone.now()
    ScoringBatch.objects.filter(pk=batch_id, done_at__isnull=True).update(
        done_at=now, renewed_at=now, lease_owner=owner, lease_expires=None
    )


class BatchLeaseKeeper:
    """Called once per scored submission: renews the lease at most every tenth of the
    lease period (and never more than every half second)."""

    def __init__(self, batch_id: int, owner: str):
        self.batch_id, self.owner = batch_id, owner
        self.every = max(0.5, lease_seconds() / 10)
        self._last = time.monotonic()

    def __call__(self) -> None:
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            renew_batch_lease(self.batch_id, self.owner)
