"""Running an executable moment-search bundle (``build.sh`` / ``run.sh``) under the
seed's contract, without Django.

Each stage runs in an **allow-list root** built by bubblewrap (``sandbox_root``): only
``/usr``, a minimal ``/etc``, the Python runtime the contract provides and the job's own
folders exist inside; no checkout, no media, no database files, no host sockets, no
other job. The stage is a new pid namespace whose first process is bwrap's init: when the
command ends, or at the wall-clock limit, every process of the stage dies with it. Each
job has a uid of its own (leased by the caller from a range, ``sandbox_host.uid_lease``),
so its process limit and its files are its own; each stage has its own cgroup (pids and
memory, where the host has them); the job's writable folders are a filesystem of its own,
of fixed size and inode count (``sandbox_disk``), so the kernel answers ``ENOSPC`` at the
quota: nothing is counted. What was enforced is recorded with every stage.

The layout of one job (``root``, mode 0700, made by :func:`prepare`):

| host path | inside | owner | what |
|---|---|---|---|
| ``app/`` | ``/job/app`` (read-only) | root | the bundle |
| ``task/data/corpus/``, ``task/queries/`` | ``/job/task`` (read-only) | root | corpus, requests |
| ``../job.img`` | | root | the job's filesystem (ext4 image, sparse, beside the job's folder), while the job runs |
| ``logs/stdout/``, ``logs/stderr/`` | ``/job/logs/…`` | root | a tmpfs per stream: the stages' logs |
| ``rw/index/`` | ``/job/work/index`` (read-write in the build, read-only after) | the job's uid | the index |
| ``rw/out/``, ``rw/tmp/``, ``rw/cache/`` | ``/job/out``, ``/job/tmp`` (``HOME``), ``/job/cache`` | the job's uid | |
| ``etc/`` | ``/etc`` (read-only) | root | the minimal ``/etc`` |

``root`` itself is a tmpfs (``sandbox_disk.mount_layout``, gone with the job), so that the
stage's ``/proc/self/mountinfo`` names what is bound from it by its path there (``/app``), never
by a host path. ``rw/`` is the mount point of ``../job.img``: mounted when the bundle starts (:func:`job_disk`),
unmounted and removed when it ends.

The ground truth never enters the job: the caller scores the rows after the bundle has
finished, in its own process. Without root or without bwrap nothing runs
(:class:`SandboxRefused`): a bundle is never run unsandboxed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from annotator.base.grading import sandbox_disk as disk
from annotator.base.grading import sandbox_host as host
from annotator.base.grading import sandbox_root as broot
from annotator.base.grading import sandbox_seccomp as seccomp
from annotator.base.grading.bundle_zip import BUNDLE_ZIP_LIMITS, ENTRY_POINTS, BundleError, extract
from annotator.base.grading.sandbox_stage import (
    LOGS,
    GiB,
    Job,
    Limits,
    StageResult,
    _memfd,
    environment,
    inside,
    log_text,
    run_stage,
)  # fmt: skip
from annotator.base.grading.uploads import ZipLimits

__all__ = [
    "BUNDLE_ZIP_LIMITS", "ENTRY_POINTS", "GiB", "BundleError", "Enforcement", "Job", "Limits", "SandboxRefused",
    "StageResult", "cleanup", "environment", "extract", "inside", "job_disk", "log_text", "prepare", "probe",
    "run_bundle", "run_stage", "scrub", "scrub_stage",
]  # fmt: skip

DEFAULT_UIDS = range(2_000_000, 2_001_000)
LAYOUT_SLACK_BYTES = 16 * 1024**2  # the job's layout tmpfs past the bundle and the corpus: etc/, the calls' folders


class SandboxRefused(RuntimeError):
    """The machine cannot sandbox the bundle (no root, no bwrap): it is not run."""


@dataclass(frozen=True)
class Enforcement:
    """What this machine enforces, detected at run time (:func:`probe`)."""

    ready: bool
    reason: str = ""
    bwrap: str = ""
    cgroups: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def as_dict(self, uid: int | None = None) -> dict:
        if not self.ready:
            return {"sandbox": "refused", "reason": self.reason, "notes": list(self.notes)}
        return {
            "sandbox": f"{self.bwrap}: allow-list root (/usr, minimal /etc, the Python runtime, the job's folders)",
            "user": uid,
            "network": "new network namespace (loopback only): no host address, no abstract socket",
            "pid_namespace": True,
            "filesystem_sockets": "none: no host folder holding one is inside",
            "seccomp": seccomp.SUMMARY
            if seccomp.program() is not None
            else f"none: no filter for {os.uname().machine}",
            "cgroups": dict(self.cgroups) or "none on this host: pid namespace, RLIMIT_NPROC of the job's uid",
            "disk": "the job's writable folders are a filesystem of its own (ext4 on a loop device, "
            "limits.disk_bytes and limits.disk_entries inodes): ENOSPC at the limit, held by the kernel",
            "logs": LOGS,
            "layout": "the job's folder is a tmpfs of its own: its mounts name no host path",
            "notes": list(self.notes),
        }


TRIAL_UID = 65534  # nobody: the trial switches to a uid that is not root's, as every stage does


def _trial() -> str:
    """Run ``true`` in a minimal root the way stages run (its seccomp filter too, and ``setpriv``
    to a uid that is not root's, its bounding set emptied); '' when it works."""
    program = seccomp.program()
    filters = [] if program is None else [_memfd("bwrap-seccomp", program)]
    args = [
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
        "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
        "--ro-bind", "/usr", "/usr", *broot.top_links(), "--proc", "/proc",
        "--dev", "/dev", *(["--seccomp", str(filters[0])] if filters else []), "--",
        broot.SETPRIV, f"--reuid={TRIAL_UID}", f"--regid={TRIAL_UID}", "--clear-groups", "--no-new-privs",
        "--inh-caps=-all", "--bounding-set=-all", "--", "/usr/bin/true",
    ]  # fmt: skip
    try:
        found = subprocess.run([broot.BWRAP, *args], capture_output=True, timeout=30, pass_fds=filters)
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    finally:
        for descriptor in filters:
            os.close(descriptor)
    return "" if found.returncode == 0 else found.stderr.decode(errors="replace").strip()[:300] or "bwrap failed"


@lru_cache(maxsize=1)
def probe() -> Enforcement:
    if os.geteuid() != 0:
        return Enforcement(False, "the bundles worker is not root: it cannot switch to a job's uid or build "
                           "the sandbox's root, so bundle runs are refused (never run unsandboxed)")  # fmt: skip
    lacking = host.missing_capabilities()
    if lacking:
        reason = f"the bundles worker lacks {', '.join(lacking)}: in a container, cap_add must give them"
        return Enforcement(False, f"{reason} (docs/deploy.md), so bundle runs are refused (never run unsandboxed)")
    if not (os.access(broot.BWRAP, os.X_OK) and os.access(broot.SETPRIV, os.X_OK)):
        return Enforcement(False, f"{broot.BWRAP} (Debian package bubblewrap) or {broot.SETPRIV} (util-linux) "
                           "is not installed: bundle runs are refused (never run unsandboxed)")  # fmt: skip
    missing = disk.missing()
    if missing:
        return Enforcement(False, f"{missing}: the worker cannot give a job a filesystem of its own, so bundle "
                           "runs are refused (never run with unbounded disk)")  # fmt: skip
    failure = _trial()
    if failure:
        return Enforcement(False, f"bwrap cannot build a sandbox here ({failure}): bundle runs are refused")
    refused = _required_cgroups_missing()
    if refused:
        return Enforcement(False, refused)
    support = host.cgroup_support()
    notes = [] if support else ["no usable cgroup v1/v2 pids or memory controller: limits by rlimits only"]
    return Enforcement(True, bwrap=broot.bwrap_version(), cgroups=support, notes=tuple(notes))


def _required_cgroups_missing() -> str:
    """Why the cgroups ``FRAMELEDGER_SANDBOX_CGROUPS`` requires cannot be made ('' when they can):
    a stage's cgroup is made and removed the way each stage's is."""
    try:
        required = host.required_cgroups()
    except ValueError as error:
        return f"{error}: bundle runs are refused"
    if not required:
        return ""
    trial = host.stage_cgroup(f"probe-{os.getpid()}", pids=64, memory_bytes=64 * 1024**2)
    trial.remove()
    missing = [name for name in required if name not in trial.enforced]
    if not missing:
        return ""
    problems = []
    for name in missing:
        noted = [note for note in trial.notes if note.startswith(f"cgroup {name} ")]
        problems.append(f"{name}: {host.cgroup_problem(name) or (noted[0] if noted else 'unusable')}")
    return (
        f"the stages' cgroups cannot be made here ({'; '.join(problems)}), and {host.REQUIRED_ENV} requires "
        f"{', '.join(required)}: bundle runs are refused (never run without their limits)"
    )


# ------------------------------------------------------------------------- the layout


def prepare(
    root: Path,
    bundle: bytes,
    records: Sequence[dict],
    features: dict[str, Path],
    requests: Sequence[dict],
    *,
    requests_per_call: int,
    uid: int,
    gid: int | None = None,
    zip_limits: ZipLimits = BUNDLE_ZIP_LIMITS,
) -> tuple[Job, int]:
    """Lay out a job under ``root`` (made 0700, must not exist). Returns the job and the
    number of calls. ``features`` maps names inside the corpus folder to files."""
    if os.geteuid() != 0:
        raise SandboxRefused(probe().reason or "the bundles worker is not root")
    job = Job(Path(root), uid, uid if gid is None else gid)
    job.root.mkdir(mode=0o700)
    os.chmod(job.root, 0o700)
    corpus_bytes = sum(os.stat(source).st_size for source in features.values())
    corpus_bytes += sum(len(json.dumps(r)) + 1 for r in [*records, *requests])
    try:
        disk.mount_layout(job.root, zip_limits.total_bytes + corpus_bytes + LAYOUT_SLACK_BYTES)
    except disk.DiskRefused as error:
        raise SandboxRefused(str(error)) from None
    extract(bundle, job.app, zip_limits)
    job.corpus.mkdir(parents=True)
    for name, source in features.items():
        destination = job.corpus / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    (job.corpus / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    calls = max(1, -(-len(requests) // requests_per_call))
    for number in range(1, calls + 1):
        chunk = requests[(number - 1) * requests_per_call : number * requests_per_call]
        job.call_queries(number).parent.mkdir(parents=True, exist_ok=True)
        job.call_queries(number).write_text("".join(json.dumps(r) + "\n" for r in chunk))
    for folder in (job.app, job.root / "task"):
        for path in [folder, *(Path(e.path) for e, _ in host.walk(folder))]:
            mode = path.lstat().st_mode
            os.chmod(path, 0o755 if stat.S_ISDIR(mode) or mode & 0o111 else 0o444)
    broot.write_etc(job.etc, job.uid, job.gid)
    return job, calls


@contextlib.contextmanager
def job_disk(job: Job, limits: Limits, *, device: str = "cpu", calls: int = 0) -> Iterator[disk.JobDisk]:
    """The job's filesystem for as long as the block runs (``job.rw``: the index, out,
    tmp and cache folders). At its end every process of the job's uid is killed, then the
    filesystem is unmounted and its image removed, whatever the job wrote in it (no walk).
    :class:`SandboxRefused` when the worker cannot make it: never run with unbounded disk."""
    try:
        made = disk.make(
            job.root, data_bytes=limits.disk_bytes, entries=limits.disk_entries, uid=job.uid, gid=job.gid,
            executable=device == "cuda", spares=calls, image_dir=job.root.parent,
        )  # fmt: skip
    except (disk.DiskRefused, OSError) as error:
        raise SandboxRefused(str(error) if isinstance(error, disk.DiskRefused) else error.strerror) from None
    try:
        disk.mount_logs(job.logs, limits.log_file_bytes)
    except disk.DiskRefused as error:
        disk.release(made.image, made.mount)
        raise SandboxRefused(str(error)) from None
    try:
        yield made
    finally:
        host.kill_uid(job.uid)
        left = disk.release(made.image, made.mount) + disk.release_logs(job.logs)
        if left:
            raise OSError(f"the job's filesystem was not released: {'; '.join(left)}")


# ------------------------------------------------------------------------ the process


def run_bundle(
    job: Job, calls: int, limits: Limits, *, row_cap: int, device: str = "cpu", tick=None
) -> tuple[list[StageResult], bytes]:
    """Build, then each call, on the job's own filesystem (:func:`job_disk`); the rows
    that count, joined. A build that fails or times out ends the job (no rows); a call that
    fails without a timeout loses its rows; a call that times out keeps the complete rows
    it wrote. The job's filesystem is gone on return."""
    enforcement = probe()
    if not enforcement.ready:
        raise SandboxRefused(enforcement.reason)
    with job_disk(job, limits, device=device, calls=calls) as made:
        job.disk = made.as_dict()
        try:
            return _stages(job, calls, limits, row_cap=row_cap, device=device, tick=tick)
        except host.CgroupsRefused as error:
            raise SandboxRefused(str(error)) from None


def _stages(job: Job, calls: int, limits: Limits, *, row_cap: int, device: str, tick) -> tuple[list, bytes]:
    corpus, index = inside(job.corpus, job), inside(job.index, job)
    app = inside(job.app, job)
    stages = []
    build = run_stage(
        job, "build", [f"{app}/build.sh", "--corpus", corpus, "--index-dir", index], limits.build_seconds, limits,
        index_writable=True, device=device, tick=tick,
    )  # fmt: skip
    stages.append(build)
    if build.outcome != "ok" or build.overran:
        return stages, b""
    rows = b""
    for number in range(1, calls + 1):
        # Each call starts with an empty out/ (what the build or an earlier call left there is
        # moved aside, not walked): its rows are what it wrote itself.
        disk.renew(job.rw, "out")
        queries, output = job.call_queries(number), job.call_output(number)
        argv = [f"{app}/run.sh", "--index-dir", index, "--queries", inside(queries, job)]
        stage = run_stage(
            job, f"call-{number}", [*argv, "--output", inside(output, job)], limits.call_seconds, limits,
            index_writable=False, device=device, tick=tick,
        )  # fmt: skip
        stage.requests = sum(1 for line in queries.read_text().splitlines() if line.strip())
        if stage.outcome in ("ok", "timeout") and not stage.overran:
            kept, stage.note = host.complete_rows(output, row_cap)
        else:
            kept = b""
        stage.rows = kept.count(b"\n")
        rows += kept
        stages.append(stage)
    return stages, rows


def enforcement_record(job: Job, stages: Sequence[StageResult]) -> dict:
    """What the run record says was enforced: the machine's, the job's uid, and the
    cgroup limits each stage actually ran under."""
    record = probe().as_dict(job.uid)
    if job.disk:
        record["job_disk"] = dict(job.disk)
    record["stage_cgroups"] = {s.name: s.enforced.get("cgroups", {}) for s in stages}
    return record


def scrub(text: str, folders: dict[str, str]) -> str:
    """``text`` with every host folder of ``folders`` (the job's folder, the sandbox folder,
    each as given and resolved) replaced by its neutral name (``<job>``, ``<sandbox>``), the
    longest first: what a submitter or a maintainer reads of a run (its outcome, its stages'
    logs, the worker's log lines) never shows a host path."""
    for folder in sorted(folders, key=len, reverse=True):
        if folder.rstrip("/"):  # the folder itself or a path in it, not a longer name (/tmp, /tmpfs)
            text = re.sub(re.escape(folder.rstrip("/")) + r"(?![^/\s'\"])", folders[folder].replace("\\", r"\\"), text)
    return text


def scrub_stage(stage: StageResult, folders: dict[str, str]) -> None:
    """The stage's logs, note and kill reason through :func:`scrub` (bwrap's own messages
    name host paths)."""
    for name in ("stdout", "stderr"):
        data: bytes = getattr(stage, name)
        if any(os.fsencode(folder.rstrip("/")) in data for folder in folders if folder.rstrip("/")):
            text = scrub(data.decode("utf-8", "surrogateescape"), folders)
            setattr(stage, name, text.encode("utf-8", "surrogateescape"))
    stage.note = scrub(stage.note, folders)
    stage.killed = scrub(stage.killed, folders)


def cleanup(root: Path) -> list[str]:
    """Remove a job folder (never raises; what stayed is returned): a filesystem still
    mounted in it (a worker that died mid-job) is unmounted first, never walked; what is
    left is the worker's own layout (the bundle's files, the corpus, ``etc``)."""
    left = [f"{point}: still mounted" for point in disk.unmount_under(Path(root))]
    return left or host.remove_tree(Path(root))
