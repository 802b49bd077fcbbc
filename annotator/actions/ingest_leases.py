"""Chunk leases and the ingest sweep: a killed worker's chunk (or join) is done again.

Every ``annotator.ingest_chunk`` task takes a **lease** on its chunk before encoding it:
an owner (host, process, random token) and an expiry, kept with the rest of the chunked
state in the job row (``Job.result["chunked"]["leases"]``, keyed by chunk index; the
join's lease under ``"join"``), always changed under the job row's lock. The encode's
progress callbacks renew it (at most every tenth of the lease period), so a lease runs out
only when its worker is gone (killed, machine lost) or stalled for a whole period.

The periodic Celery beat task ``annotator.ingest_sweep`` (every
``FRAMELEDGER_INGEST_SWEEP_SECONDS``) looks at every running chunked ingest
(:func:`do_sweep_ingests`) and queues again:

* each chunk not done whose lease has expired;
* each chunk not done and never leased when the whole ingest has shown no sign of life
  (no lease taken or renewed) for a lease period: its message was lost, not merely
  waiting behind the others in the queue;
* the join, once every chunk is done, when its lease has expired or it was queued a lease
  period ago and never started.

Each piece is sent at most ``FRAMELEDGER_INGEST_MAX_ATTEMPTS`` times in all (the first send
is the ingest's own; ``chunked["sends"]`` counts the others): a piece lost once more ends the
ingest ``failed`` with the reason (``fail_ingest``) and its working directory is removed.

A re-queued chunk gets a reservation lease (owner ``"sweep"``) so that the next sweep
does not queue it again before a worker picks it up; any task may take a reserved or an
expired lease. Duplicates are harmless: a chunk's output is written under a name of its
own and renamed into place (the same frames, the same file), a chunk whose file exists is
not encoded again, "done" is a set, and the join is queued once and runs under its lease
(a second join while one holds the lease does nothing; one after the ingest finished does
nothing either).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.base.queue import INGEST_CHUNK, INGEST_JOIN, enqueue_each_on_commit, enqueue_on_commit
from annotator.models import Job

SWEEP_OWNER = "sweep"
JOIN = "join"


def lease_seconds() -> float:
    return float(settings.FRAMELEDGER_INGEST_LEASE_SECONDS)


def new_owner() -> str:
    """A lease owner name: host, process and a random token (unique per task run)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _lease_free(lease: dict | None, owner: str, now: float) -> bool:
    return lease is None or lease.get("owner") in {owner, SWEEP_OWNER} or float(lease.get("expires", 0)) <= now


def take_lease(job: Job, key: str, owner: str) -> bool:
    """Take (or keep) the lease on chunk ``key`` (an index as a string, or ``"join"``).

    False when the job is no longer running chunked or another live owner holds it."""
    now = time.time()
    with transaction.atomic():
        row = Job.objects.select_for_update().filter(pk=job.pk).first()
        if row is None or row.status != Job.Status.RUNNING or "chunked" not in (row.result or {}):
            return False
        leases = row.result["chunked"].setdefault("leases", {})
        if not _lease_free(leases.get(key), owner, now):
            return False
        leases[key] = {"owner": owner, "expires": now + lease_seconds(), "taken": now}
        Job.objects.filter(pk=job.pk).update(result=row.result)
    return True


def holds_lease(job: Job, key: str, owner: str) -> bool:
    """Is the job still running chunked with ``owner`` holding lease ``key``?"""
    row = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).first()
    lease = ((row.result or {}).get("chunked", {}).get("leases", {}).get(key)) if row else None
    return lease is not None and lease.get("owner") == owner


def renew_lease(job: Job, key: str, owner: str) -> None:
    """Push the lease's expiry forward, if ``owner`` still holds it."""
    now = time.time()
    with transaction.atomic():
        row = Job.objects.select_for_update().filter(pk=job.pk).first()
        if row is None or row.status != Job.Status.RUNNING or "chunked" not in (row.result or {}):
            return
        lease = row.result["chunked"].get("leases", {}).get(key)
        if lease is None or lease.get("owner") != owner:
            return  # expired and handed on: the other run's output is the same file
        lease["expires"] = now + lease_seconds()
        Job.objects.filter(pk=job.pk).update(result=row.result)


class LeaseKeeper:
    """Wraps a progress callback: every call may renew the lease (at most every tenth of
    the lease period, and never more than every half second)."""

    def __init__(self, job: Job, key: str, owner: str, progress=None):
        self.job, self.key, self.owner, self.progress = job, key, owner, progress
        self.every = max(0.5, lease_seconds() / 10)
        self._last = time.monotonic()

    def __call__(self, fraction: float, *args, **kwargs) -> None:
        if self.progress is not None:
            self.progress(fraction, *args, **kwargs)
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            renew_lease(self.job, self.key, self.owner)


def _last_sign_of_life(chunked: dict) -> float:
    """Latest lease taken, renewed or reserved, else when the chunks were planned."""
    moments = [float(chunked.get("planned_at", 0))]
    for lease in chunked.get("leases", {}).values():
        moments.append(float(lease.get("expires", 0)) - lease_seconds())
        moments.append(float(lease.get("taken", 0)))
    return max(moments)


def max_attempts() -> int:
    return max(1, int(settings.FRAMELEDGER_INGEST_MAX_ATTEMPTS))


def _exhausted(chunked: dict, keys: list[str]) -> str | None:
    """The first of ``keys`` already sent ``max_attempts()`` times (the first send is the
    ingest's own), else None."""
    sends = chunked.get("sends", {})
    return next((key for key in keys if 1 + int(sends.get(key, 0)) >= max_attempts()), None)


def do_sweep_job(job: Job, now: float | None = None) -> dict:
    """Queue again what a running chunked ingest lost; returns ``{"chunks": [...], "join": bool}``
    (and ``"failed"``: the reason, when a piece was lost ``FRAMELEDGER_INGEST_MAX_ATTEMPTS``
    times and the ingest ended ``failed``)."""
    requeued = _sweep_job(job, now)
    if requeued.get("failed"):
        from annotator.actions.ingest_steps import fail_ingest

        row = Job.objects.select_related("video").filter(pk=job.pk, status=Job.Status.RUNNING).first()
        if row is not None and row.video is not None:
            workdir = (row.result or {}).get("chunked", {}).get("workdir")
            fail_ingest(row.video, row, requeued["failed"])
            if workdir:
                shutil.rmtree(Path(settings.MEDIA_ROOT) / workdir, ignore_errors=True)
    return requeued


def _sweep_job(job: Job, now: float | None) -> dict:
    now = time.time() if now is None else now
    period = lease_seconds()
    requeued: dict = {"chunks": [], "join": False}
    with transaction.atomic():
        row = Job.objects.select_for_update().filter(pk=job.pk).first()
        if row is None or row.status != Job.Status.RUNNING or "chunked" not in (row.result or {}):
            return requeued
        chunked = row.result["chunked"]
        leases = chunked.setdefault("leases", {})
        done = set(chunked.get("done", []))
        idle = now - _last_sign_of_life(chunked) >= period
        for index in range(chunked["chunks"]):
            if index in done:
                continue
            lease = leases.get(str(index))
            if (lease is not None and float(lease.get("expires", 0)) <= now) or (lease is None and idle):
                requeued["chunks"].append(index)
                leases[str(index)] = {"owner": SWEEP_OWNER, "expires": now + period, "taken": now}
        if len(done) == chunked["chunks"] and chunked.get("join_queued"):
            lease = leases.get(JOIN)
            queued_at = float(chunked.get("join_queued_at", 0))
            lost = float(lease["expires"]) <= now if lease is not None else now - queued_at >= period
            if lost:
                requeued["join"] = True
                leases[JOIN] = {"owner": SWEEP_OWNER, "expires": now + period, "taken": now}
        if not requeued["chunks"] and not requeued["join"]:
            return requeued
        lost = [str(i) for i in requeued["chunks"]] + ([JOIN] if requeued["join"] else [])
        exhausted = _exhausted(chunked, lost)
        if exhausted is not None:
            what = "the join of the proxy chunks" if exhausted == JOIN else f"proxy chunk {int(exhausted) + 1}"
            return {
                "chunks": [],
                "join": False,
                "failed": f"Ingest failed: {what} was lost {max_attempts()} times (its worker was killed or "
                "stalled, or its message was lost); upload the video again or ask an operator to check the workers.",
            }
        sends = chunked.setdefault("sends", {})
        for key in lost:
            sends[key] = int(sends.get(key, 0)) + 1
        chunked["requeued"] = chunked.get("requeued", 0) + len(requeued["chunks"]) + int(requeued["join"])
        Job.objects.filter(pk=row.pk).update(result=row.result, updated_at=timezone.now())
        video_id = row.video_id
        if requeued["chunks"]:
            enqueue_each_on_commit(INGEST_CHUNK, [(video_id, row.pk, i) for i in requeued["chunks"]])
        if requeued["join"]:
            enqueue_on_commit(INGEST_JOIN, video_id, row.pk)
    return requeued


def requeue_consumed_chunks(job: Job, owner: str, missing: list[int]) -> None:
    """A join found chunks an earlier join deleted (it copied them, then lost its lease and
    never finished): mark them not done, release the join, and queue their encodes again."""
    now = time.time()
    with transaction.atomic():
        row = Job.objects.select_for_update().filter(pk=job.pk).first()
        if row is None or row.status != Job.Status.RUNNING or "chunked" not in (row.result or {}):
            return
        chunked = row.result["chunked"]
        leases = chunked.setdefault("leases", {})
        if (leases.get(JOIN) or {}).get("owner") != owner:
            return
        leases.pop(JOIN, None)
        chunked["done"] = sorted(set(chunked.get("done", [])) - set(missing))
        chunked["join_queued"] = False
        for index in missing:
            leases[str(index)] = {"owner": SWEEP_OWNER, "expires": now + lease_seconds(), "taken": now}
        chunked["requeued"] = chunked.get("requeued", 0) + len(missing)
        Job.objects.filter(pk=row.pk).update(result=row.result, updated_at=timezone.now())
        enqueue_each_on_commit(INGEST_CHUNK, [(row.video_id, row.pk, i) for i in missing])


def do_sweep_ingests(now: float | None = None) -> dict[int, dict]:
    """Sweep every running chunked ingest; returns what was queued again, by job id."""
    report = {}
    for job in Job.objects.filter(status=Job.Status.RUNNING, result__has_key="chunked").only("pk"):
        requeued = do_sweep_job(job, now)
        if requeued["chunks"] or requeued["join"] or requeued.get("failed"):
            report[job.pk] = requeued
    return report
