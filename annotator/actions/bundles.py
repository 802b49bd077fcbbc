"""Executable moment-search submissions: queue a bundle against a pinned version, run
it in the sandbox (``annotator.base.grading.sandbox``) and score the rows that count.

* ``do_submit_bundle`` stores the bundle and its limits (from the settings, pinned on
  the row) and, after commit, sends ``annotator.run_bundle`` to the bundle queue (the
  GPU queue for ``device="cuda"``).
* ``do_run_bundle`` runs in the worker: lays out the job (code, corpus and requests
  read-only; never the ground truth), builds, runs the calls, then stores the rows as
  a ``Submission`` of the packet and scores it with the version's scorer in a pinned
  ``ScoringRun``, so it lands on the leaderboard like any other submission.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import socket
import tempfile
import zipfile
from datetime import timedelta
from pathlib import Path
from traceback import format_exception

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotator.actions.grading import do_score_batch, do_start_scoring_run, run_chunks
from annotator.base.errors import InvalidInput
from annotator.base.families import adapter_for, family_names
from annotator.base.grading import sandbox, sandbox_host
from annotator.base.grading.uploads import ZipLimits
from annotator.base.queue import RUN_BUNDLE, send
from annotator.base.seals import bundle_submit_seal, row_seal
from annotator.models import BundleRun, GroundTruthVersion, Submission, SubmissionScore
from annotator.models.audit_log import record
from annotator.reads.grading_inputs import check_scorer_id
from annotator.reads.integrity import TamperedData
from annotator.reads.moment_corpus import moment_corpus
from annotator.reads.sealed_rows import verify_bundle_runs
from scoring.moments import MAX_SOLUTION_BYTES

logger = logging.getLogger(__name__)


def pinned_limits() -> dict:
    return sandbox.Limits(
        build_seconds=float(settings.FRAMELEDGER_BUNDLE_BUILD_SECONDS),
        call_seconds=float(settings.FRAMELEDGER_BUNDLE_CALL_SECONDS),
        requests_per_call=settings.FRAMELEDGER_BUNDLE_REQUESTS_PER_CALL,
        processes=settings.FRAMELEDGER_BUNDLE_PROCESSES,
        file_bytes=settings.FRAMELEDGER_BUNDLE_FILE_BYTES,
        address_space_bytes=settings.FRAMELEDGER_BUNDLE_MEMORY_BYTES,
        log_bytes=settings.FRAMELEDGER_BUNDLE_LOG_BYTES,
        memory_bytes=settings.FRAMELEDGER_BUNDLE_CGROUP_MEMORY_BYTES,
        disk_bytes=settings.FRAMELEDGER_BUNDLE_DISK_BYTES,
        disk_entries=settings.FRAMELEDGER_BUNDLE_DISK_ENTRIES,
        tmpfs_bytes=settings.FRAMELEDGER_BUNDLE_TMPFS_BYTES,
    ).as_dict()


def zip_limits() -> ZipLimits:
    """The caps a bundle's zip is unpacked under: the submission archives' entry count
    and ratio, and the bundle's own inflated total."""
    inflated = settings.FRAMELEDGER_BUNDLE_MAX_INFLATED_BYTES
    return ZipLimits(
        entries=settings.FRAMELEDGER_ZIP_MAX_ENTRIES,
        entry_bytes=inflated,
        total_bytes=inflated,
        ratio=settings.FRAMELEDGER_ZIP_MAX_RATIO,
    )


def validate_bundle(data: bytes) -> None:
    """Refuse what cannot be a bundle before it is stored (the runner checks again):
    every entry is inflated and counted, nothing is written."""
    if len(data) > settings.FRAMELEDGER_BUNDLE_MAX_BYTES:
        raise InvalidInput(f"the bundle exceeds {settings.FRAMELEDGER_BUNDLE_MAX_BYTES} bytes", field="bundle")
    try:
        sandbox.extract(data, None, zip_limits())
    except sandbox.BundleError as error:
        raise InvalidInput(str(error), field="bundle") from None


@transaction.atomic
def do_submit_bundle(
    version: GroundTruthVersion,
    data: bytes,
    *,
    actor,
    label: str,
    device: str = "cpu",
    reference: bool = False,
    dispatch: bool = True,
) -> BundleRun:
    family = version.packet.task_kind.schema.get("family")
    if family not in family_names() or not adapter_for(family).executable_bundles:
        raise InvalidInput("executable bundles grade moment-query versions only", field="version")
    check_scorer_id(version, None)
    if device not in ("cpu", "cuda"):
        raise InvalidInput("device must be cpu or cuda", field="device")
    label = (label or "").strip()[:200]
    if not label:
        raise InvalidInput("a bundle needs a label", field="label")
    validate_bundle(data)
    queue = settings.FRAMELEDGER_BUNDLE_GPU_QUEUE if device == "cuda" else settings.FRAMELEDGER_BUNDLE_QUEUE
    run = BundleRun.objects.create(
        version=version,
        label=label,
        bundle=data,
        bundle_sha256=hashlib.sha256(data).hexdigest(),
        reference=reference,
        device=device,
        queue=queue,
        # CUDA reserves far more virtual address space than it uses: no RLIMIT_AS there.
        limits={**pinned_limits(), **({"address_space_bytes": 0} if device == "cuda" else {})},
        created_by=actor,
    )
    # Its submitted columns sealed as stored (the worker may write only the others, and only
    # while the run has not ended: migration 0019_sealed_bundle_runs).
    stored = BundleRun.objects.defer("bundle").get(pk=run.pk)
    record(
        actor,
        "submit_bundle",
        run,
        packet=version.packet,
        hashes={"bundle": run.bundle_sha256, "version": version.sha256, "row": bundle_submit_seal(stored)},
        details={"label": label, "queue": queue, "limits": run.limits, "reference": reference},
    )
    if dispatch:
        transaction.on_commit(lambda: send(RUN_BUNDLE, (run.pk,), queue=queue))
    return run


# -------------------------------------------------------------------------- the worker


def bundle_inputs(version: GroundTruthVersion) -> tuple[list[dict], dict[str, Path], list[dict]]:
    """Corpus records, feature files and requests for a version (no answers in them)."""
    return moment_corpus(version)


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _claim(run_id: int) -> bool:
    """Take a queued run, or a running one whose worker stopped renewing its heartbeat
    (a redelivered message after the worker died): one worker at a time."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.FRAMELEDGER_BUNDLE_LEASE_SECONDS)
    free = Q(status=BundleRun.Status.QUEUED) | Q(status=BundleRun.Status.RUNNING, heartbeat_at__lt=stale)
    claimed = BundleRun.objects.filter(free, pk=run_id).update(
        status=BundleRun.Status.RUNNING, worker=_worker_name(), heartbeat_at=now
    )
    return bool(claimed)


def _heartbeat(run_id: int):
    def tick() -> None:
        BundleRun.objects.filter(pk=run_id, status=BundleRun.Status.RUNNING, worker=_worker_name()).update(
            heartbeat_at=timezone.now()
        )

    return tick


def do_run_bundle(run_id: int) -> BundleRun:
    """Run a queued bundle and score its rows. Whatever happens the run ends final
    (``done`` or ``error`` with the reason and the stages' logs), its job folder is
    removed and its uid's processes are dead. A redelivered task finds it final."""
    if not _claim(run_id):
        return BundleRun.objects.get(pk=run_id)
    run = BundleRun.objects.select_related("version__packet__task_kind", "version__packet__video").get(pk=run_id)
    changed = _changed_since_submission(run)
    if changed:
        logger.warning("bundle run %s refused: %s", run.pk, changed)
        return _error(run, changed, [], {})
    enforcement = sandbox.probe()
    if not enforcement.ready:
        logger.warning("bundle run %s refused: %s", run.pk, enforcement.reason)
        return _error(run, enforcement.reason, [], enforcement.as_dict())
    limits = sandbox.Limits.of(run.limits)
    stages: list[sandbox.StageResult] = []
    tick = _heartbeat(run.pk)
    base = Path(settings.FRAMELEDGER_SANDBOX_DIR or tempfile.gettempdir())
    hidden = _hidden(base, "<sandbox>")  # and the job's folder once it exists
    try:
        uids = sandbox_host.parse_uid_range(settings.FRAMELEDGER_SANDBOX_UIDS)
        sandbox_host.remove_stale_job_folders(base, "bundle-")
        sandbox_host.remove_stale_cgroups()
        with sandbox_host.uid_lease(uids, sandbox_host.uid_lock_dir(base)) as uid:
            parent = Path(tempfile.mkdtemp(prefix=f"bundle-{run.pk}-", dir=base))  # 0700, root's
            hidden.update(_hidden(parent, "<job>"))
            lock = sandbox_host.hold_job_folder(parent)  # a folder whose lock is free is a dead worker's
            try:
                records, features, requests = bundle_inputs(run.version)
                job, calls = sandbox.prepare(
                    parent / "job", bytes(run.bundle), records, features, requests,
                    requests_per_call=limits.requests_per_call, uid=uid, zip_limits=zip_limits(),
                )  # fmt: skip
                tick()
                stages, rows = sandbox.run_bundle(
                    job, calls, limits, row_cap=MAX_SOLUTION_BYTES, device=run.device, tick=tick
                )
                record = sandbox.enforcement_record(job, stages)
            finally:
                left = sandbox.cleanup(parent)
                os.close(lock)
                if left:
                    shown = sandbox.scrub("; ".join(left[:3]), hidden)
                    logger.warning("bundle run %s: job folder not fully removed: %s", run.pk, shown)
    except (sandbox.BundleError, sandbox.SandboxRefused, sandbox_host.NoFreeUid, OSError, ValueError) as error:
        message = sandbox.scrub(str(error), hidden)
        logger.warning("bundle run %s could not run: %s", run.pk, message)
        return _error(run, message, _scrubbed(stages, hidden), enforcement.as_dict())
    except Exception as error:  # a fault of the runner itself: recorded on the run, never left running
        message = sandbox.scrub(f"the runner failed: {type(error).__name__}: {error}", hidden)
        logger.error("bundle run %s failed: %s", run.pk, sandbox.scrub("".join(format_exception(error)), hidden))
        return _error(run, message, _scrubbed(stages, hidden), enforcement.as_dict())
    stages = _scrubbed(stages, hidden)
    overran = [s for s in stages if s.overran]
    if overran:
        message = "; ".join(f"{s.name} ran {s.seconds:.0f} s, past its limit" for s in overran)
        message += ": nothing of the run counts"
        return _error(run, message, stages, record)
    try:
        return _score(run, stages, rows, record)
    except Exception as error:
        logger.exception("bundle run %s could not be scored", run.pk)
        return _error(run, f"the rows could not be scored: {type(error).__name__}: {error}", stages, record)


def _hidden(folder: Path, name: str) -> dict[str, str]:
    """A host folder, as given and resolved, and the name a run's texts show instead."""
    return {os.fspath(folder): name, os.fspath(folder.resolve()): name}


def _scrubbed(stages: list, hidden: dict[str, str]) -> list:
    """The stages with the job's folder scrubbed from their logs (only the job's folder: the
    sandbox folder may be ``/tmp``, which the bundle's own messages name inside)."""
    job = {folder: name for folder, name in hidden.items() if name == "<job>"}
    for stage in stages:
        sandbox.scrub_stage(stage, job)
    return stages


def _changed_since_submission(run: BundleRun) -> str:
    """Why the run must not start ('' when it may): its bytes or its submitted columns
    differ from what was submitted (changed below the ORM with the triggers dropped)."""
    actual = hashlib.sha256(bytes(run.bundle)).hexdigest()
    if actual != run.bundle_sha256:
        submitted = run.bundle_sha256[:16]
        return f"integrity: the bundle's bytes (SHA-256 {actual[:16]}…) are not those submitted ({submitted}…): not run"
    try:
        verify_bundle_runs([run])
    except TamperedData as error:
        return f"integrity: {error}: not run"
    return ""


FINAL = (BundleRun.Status.DONE, BundleRun.Status.ERROR)


def _finish(run_id: int, *, hashes: dict | None = None, details: dict | None = None, only=None, **columns):
    """End a run that has not ended (``only``: a further condition on it) with ``columns``,
    and record ``finish_bundle_run`` with the seal of every column as stored, in one
    transaction: a finished run is refused below the ORM from then on (migration
    ``0019_sealed_bundle_runs``), and its reads check the seal. None when the run had
    already ended (the sweep ended it; a redelivered task): what it says then stands."""
    with transaction.atomic():
        rows = BundleRun.objects.filter(pk=run_id).exclude(status__in=FINAL)
        if not rows.filter(only or Q()).update(**columns):
            return None
        run = BundleRun.objects.select_related("version__packet").defer("bundle").get(pk=run_id)
        record(
            None,
            "finish_bundle_run",
            run,
            packet=run.version.packet,
            hashes={"bundle": run.bundle_sha256, **(hashes or {}), "row": row_seal(run)},
            details={"status": run.status, "outcome": run.outcome, **(details or {})},
        )
        return run


def _error(run: BundleRun, message: str, stages: list, enforcement: dict | None = None) -> BundleRun:
    ended = _finish(
        run.pk,
        status=BundleRun.Status.ERROR,
        outcome=sandbox.log_text(message.encode("utf-8", "surrogateescape"))[:2000],
        stages=[s.as_dict() for s in stages],
        enforcement=enforcement or {},
        finished_at=timezone.now(),
    )
    if ended is None:
        logger.warning("bundle run %s had already ended; not ended again with: %s", run.pk, message[:200])
        return BundleRun.objects.get(pk=run.pk)
    return ended


def do_sweep_bundle_runs() -> list[int]:
    """End (``error``) every running bundle run whose worker has not renewed its
    heartbeat for ``FRAMELEDGER_BUNDLE_LEASE_SECONDS``: the worker died (killed, machine
    lost). Returns the ids ended. Celery beat runs it as ``annotator.bundle_sweep``."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.FRAMELEDGER_BUNDLE_LEASE_SECONDS)
    ended = []
    for run in BundleRun.objects.filter(status=BundleRun.Status.RUNNING, heartbeat_at__lt=stale).defer("bundle"):
        seen = run.heartbeat_at.isoformat() if run.heartbeat_at else "never"
        message = f"the worker running it ({run.worker or 'unknown'}) stopped: no heartbeat since {seen}"
        ended_run = _finish(
            run.pk,
            only=Q(status=BundleRun.Status.RUNNING, heartbeat_at__lt=stale),
            status=BundleRun.Status.ERROR,
            outcome=message,
            finished_at=now,
            details={"ended_by": "sweep"},
        )
        if ended_run is not None:
            ended.append(run.pk)
            logger.warning("bundle run %s ended by the sweep: %s", run.pk, message)
    return ended


def outcome_of(stages: list[sandbox.StageResult]) -> str:
    build = stages[0]
    if build.outcome != "ok":
        why = f"timed out after {build.seconds:.1f} s" if build.timed_out else f"exited with {build.exit_code}"
        why = f"was killed ({build.killed})" if build.killed else why
        return f"build {why}{f' ({build.signal})' if build.signal else ''}: no index, every request scores 0"
    parts = []
    for stage in stages[1:]:
        if stage.killed:
            parts.append(f"{stage.name} was killed ({stage.killed}): the call is invalid, its rows are dropped")
        elif stage.note:
            parts.append(f"{stage.name}: {stage.note}")
        elif stage.outcome == "timeout":
            parts.append(f"{stage.name} timed out; its {stage.rows} complete row(s) count")
        elif stage.outcome == "failed":
            parts.append(f"{stage.name} exited with {stage.exit_code}: the call is invalid, its rows are dropped")
    return "; ".join(parts) or "ok"


class _EndedElsewhere(Exception):
    """The run had ended (the sweep) before its rows could count: nothing of them is kept."""


def _score(run: BundleRun, stages: list, rows: bytes, enforcement: dict) -> BundleRun:
    """Store the rows, score them and end the run ``done``, in one transaction: rows count
    only with a run that ends ``done`` here. Its first write takes the run (the row's lock on
    PostgreSQL, the database's write lock on SQLite) and renews its heartbeat, so the sweep
    cannot end it in between; a run the sweep has already ended (or another worker holds)
    stores and scores nothing."""
    try:
        with transaction.atomic():
            taken = BundleRun.objects.filter(pk=run.pk, status=BundleRun.Status.RUNNING, worker=_worker_name())
            if not taken.update(heartbeat_at=timezone.now()):
                raise _EndedElsewhere
            ended = _store_and_score(run, stages, rows, enforcement)
            if ended is None:
                raise _EndedElsewhere
    except _EndedElsewhere:
        logger.warning("bundle run %s had already ended; its rows were not stored or scored", run.pk)
        return BundleRun.objects.get(pk=run.pk)
    return ended


def _store_and_score(run: BundleRun, stages: list, rows: bytes, enforcement: dict) -> BundleRun | None:
    """The body of :func:`_score`; the caller holds the transaction and the run."""
    submission = Submission.objects.create(
        packet=run.version.packet,
        label=run.label,
        original_name=f"bundle-{run.pk}/results.jsonl",
        batch=f"bundle-{run.pk}",
        content=rows,
        sha256=hashlib.sha256(rows).hexdigest(),
        size_bytes=len(rows),
        uploaded_by=run.created_by,
    )
    record(
        None,
        "bundle_submission",
        submission,
        packet=submission.packet,
        hashes={"batch": submission.batch, "submissions": {str(submission.pk): row_seal(submission)}},
        details={"bundle_run": run.pk, "sha256": submission.sha256},
    )
    scoring_run = do_start_scoring_run(run.version, [submission], actor=run.created_by, dispatch=False)
    for chunk in run_chunks(scoring_run):
        do_score_batch(scoring_run.pk, chunk)
    score = SubmissionScore.objects.get(run=scoring_run, submission=submission)
    return _finish(
        run.pk,
        stages=[s.as_dict() for s in stages],
        enforcement=enforcement,
        submission=submission,
        score=score,
        status=BundleRun.Status.DONE,
        outcome=outcome_of(stages),
        finished_at=timezone.now(),
        hashes={"rows": submission.sha256},
        details={"reward": score.reward, "seconds": {s.name: s.seconds for s in stages}},
    )


def zip_folder(folder: Path) -> bytes:
    """A folder as a zip (keeps the executable bits), for the command line."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(folder)))
                info.external_attr = (path.stat().st_mode & 0o777 | 0o100000) << 16
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()
