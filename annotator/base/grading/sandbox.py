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
| ``disk.img`` | | root | the job's filesystem (ext4 image, sparse), while the job runs |
| ``rw/index/`` | ``/job/work/index`` (read-write in the build, read-only after) | the job's uid | the index |
| ``rw/out/``, ``rw/tmp/``, ``rw/cache/`` | ``/job/out``, ``/job/tmp`` (``HOME``), ``/job/cache`` | the job's uid | |
| ``etc/`` | ``/etc`` (read-only) | root | the minimal ``/etc`` |

``rw/`` is the mount point of ``disk.img``: mounted when the bundle starts (:func:`job_disk`),
unmounted and removed when it ends.

The ground truth never enters the job: the caller scores the rows after the bundle has
finished, in its own process. Without root or without bwrap nothing runs
(:class:`SandboxRefused`): a bundle is never run unsandboxed.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from annotator.base.grading import sandbox_disk as disk
from annotator.base.grading import sandbox_host as host
from annotator.base.grading import sandbox_root as broot
from annotator.base.grading import sandbox_seccomp as seccomp
from annotator.base.grading.bundle_zip import BUNDLE_ZIP_LIMITS, ENTRY_POINTS, BundleError, extract
from annotator.base.grading.uploads import ZipLimits

__all__ = [
    "BUNDLE_ZIP_LIMITS", "ENTRY_POINTS", "BundleError", "Enforcement", "Job", "Limits", "SandboxRefused",
    "StageResult", "cleanup", "extract", "prepare", "probe", "run_bundle", "run_stage",
]  # fmt: skip

GiB = 1024**3
DEFAULT_UIDS = range(2_000_000, 2_001_000)


class SandboxRefused(RuntimeError):
    """The machine cannot sandbox the bundle (no root, no bwrap): it is not run."""


@dataclass(frozen=True)
class Limits:
    build_seconds: float = 3600.0
    call_seconds: float = 2700.0
    requests_per_call: int = 250
    processes: int = 512  # RLIMIT_NPROC of the job's own uid, and pids.max of the stage's cgroup
    file_bytes: int = 16 * GiB  # RLIMIT_FSIZE: the largest file a stage may write
    address_space_bytes: int = 32 * GiB  # RLIMIT_AS per process; 0 = none (CUDA reserves more)
    open_files: int = 4096
    log_bytes: int = 256 * 1024  # kept per stream and stage
    memory_bytes: int = 16 * GiB  # the stage's memory cgroup (tmpfs pages count), where there is one
    disk_bytes: int = 16 * GiB  # what the job's writable folders may hold together (its filesystem's size)
    disk_entries: int = 200_000  # files and folders in them (its inode count)
    tmpfs_bytes: int = 256 * 1024**2  # each of /tmp, /var/tmp, /dev/shm inside

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def of(cls, pinned: dict) -> Limits:
        """Limits pinned on a run (older rows lack the newer keys: defaults)."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in pinned.items() if k in known})


@dataclass
class StageResult:
    name: str
    argv: list[str]
    seconds: float = 0.0
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    overran: bool = False  # ended more than OVERRUN_SECONDS past its limit: nothing of it counts
    stdout: bytes = b""
    stderr: bytes = b""
    dropped_bytes: int = 0
    outcome: str = ""  # ok | timeout | failed | killed
    killed: str = ""  # why the runner killed the stage before its end
    note: str = ""  # e.g. the output was not a plain file
    requests: int = 0
    rows: int = 0
    enforced: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The stage as stored on the run: each log as text any database takes (invalid UTF-8
        and NUL become U+FFFD) and, when that text is not the exact bytes, the bytes too
        (``stdout_base64``, ``stderr_base64``); both capped at ``limits.log_bytes``."""
        body = asdict(self)
        for name in ("stdout", "stderr"):
            data: bytes = getattr(self, name)
            body[name] = log_text(data)
            if body[name].encode() != data:
                body[f"{name}_base64"] = base64.b64encode(data).decode()
        return body


def log_text(data: bytes) -> str:
    """Bytes as text that PostgreSQL's and SQLite's JSON both store: invalid UTF-8 and NUL
    (which PostgreSQL's ``jsonb`` refuses) become U+FFFD."""
    return data.decode("utf-8", "replace").replace("\x00", "\ufffd")


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
            "notes": list(self.notes),
        }


def _trial() -> str:
    """Run ``true`` in a minimal root the way stages run (its seccomp filter too); '' when it works."""
    program = seccomp.program()
    filters = [] if program is None else [_memfd("bwrap-seccomp", program)]
    args = [
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
        "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr", *broot.top_links(), "--proc", "/proc",
        "--dev", "/dev", *(["--seccomp", str(filters[0])] if filters else []), "--", "/usr/bin/true",
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
    support = host.cgroup_support()
    notes = [] if support else ["no usable cgroup v1/v2 pids or memory controller: limits by rlimits only"]
    return Enforcement(True, bwrap=broot.bwrap_version(), cgroups=support, notes=tuple(notes))


# ------------------------------------------------------------------------- the layout


@dataclass
class Job:
    root: Path
    uid: int
    gid: int
    disk: dict = field(default_factory=dict)  # the job's filesystem, as made (JobDisk.as_dict)

    app = property(lambda self: self.root / "app")
    corpus = property(lambda self: self.root / "task" / "data" / "corpus")
    rw = property(lambda self: self.root / "rw")  # the job's filesystem, while it is mounted
    index = property(lambda self: self.rw / "index")
    out = property(lambda self: self.rw / "out")
    tmp = property(lambda self: self.rw / "tmp")
    cache = property(lambda self: self.rw / "cache")
    etc = property(lambda self: self.root / "etc")

    def call_queries(self, number: int) -> Path:
        return self.root / "task" / "queries" / f"call-{number}.jsonl"

    def call_output(self, number: int) -> Path:
        return self.out / f"call-{number}.jsonl"

    def binds(self) -> list[tuple[Path, Path]]:
        """Each host folder of the job and where the bundle sees it."""
        return [
            (self.app, broot.INSIDE / "app"),
            (self.root / "task", broot.INSIDE / "task"),
            (self.index, broot.INSIDE / "work" / "index"),
            (self.out, broot.INSIDE / "out"),
            (self.tmp, broot.INSIDE / "tmp"),
            (self.cache, broot.INSIDE / "cache"),
        ]


def inside(path: Path, job: Job) -> str:
    """A job path as the bundle sees it."""
    for folder, seen in job.binds():
        try:
            return str(seen / Path(path).relative_to(folder))
        except ValueError:
            continue
    raise ValueError(f"{path} is not in the job's folders")


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
            executable=device == "cuda", spares=calls,
        )  # fmt: skip
    except (disk.DiskRefused, OSError) as error:
        raise SandboxRefused(str(error) if isinstance(error, disk.DiskRefused) else error.strerror) from None
    try:
        yield made
    finally:
        host.kill_uid(job.uid)
        left = disk.release(made.image, made.mount)
        if left:
            raise OSError(f"the job's filesystem was not released: {'; '.join(left)}")


# ------------------------------------------------------------------------ the process


def environment(job: Job) -> dict:
    runtime = broot.runtime()
    env = {
        "PATH": f"{runtime.python_bin}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": runtime.pythonpath,
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": inside(job.tmp, job),
        "TMPDIR": inside(job.tmp, job),
        "XDG_CACHE_HOME": inside(job.cache, job),
        "RETRIEVAL_CACHE_DIR": inside(job.cache, job),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": os.environ.get("FRAMELEDGER_SANDBOX_THREADS", "1"),
    }
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


TIMEOUT = "/usr/bin/timeout"  # coreutils
PR_SET_PDEATHSIG = 1
# The worker's own look at the clock comes this long after the watchdog's kill: it only notices.
WATCH_GRACE_SECONDS = 5.0
# A stage that ended this long past its limit (a watchdog that failed) counts nothing.
OVERRUN_SECONDS = 30.0


def _pre_exec(limits: Limits, seconds: float, cgroups: list[bytes]):
    # CPU seconds: every core busy for the whole stage is the most a stage can use
    # legitimately (RLIMIT_CPU counts all threads of a process).
    cpu = int(seconds * (os.cpu_count() or 1)) + 1
    memory = limits.address_space_bytes or resource.RLIM_INFINITY
    pid = b"%d"
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def apply() -> None:
        # The watchdog dies with the worker (and bwrap with it: --die-with-parent).
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.setsid()
        for procs in cgroups:  # join the stage's cgroups before anything can fork
            descriptor = os.open(procs, os.O_WRONLY)
            try:
                os.write(descriptor, pid % os.getpid())
            finally:
                os.close(descriptor)
        for name, value in (
            (resource.RLIMIT_NPROC, limits.processes),
            (resource.RLIMIT_FSIZE, limits.file_bytes),
            (resource.RLIMIT_CPU, cpu),
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(name, (value, value))

    return apply


class _Capture(threading.Thread):
    """Reads a pipe to its end, keeping the first ``cap`` bytes."""

    def __init__(self, stream, cap: int):
        super().__init__(daemon=True)
        self.stream, self.cap, self.kept, self.dropped = stream, cap, bytearray(), 0

    def run(self) -> None:
        try:
            while chunk := self.stream.read(65536):
                room = self.cap - len(self.kept)
                self.kept += chunk[: max(room, 0)]
                self.dropped += max(len(chunk) - max(room, 0), 0)
        except (OSError, ValueError):
            pass


def _memfd(name: str, data: bytes) -> int:
    descriptor = os.memfd_create(name, 0)
    os.write(descriptor, data)
    os.lseek(descriptor, 0, os.SEEK_SET)
    return descriptor


def _args_fd(args: Sequence[str]) -> int:
    return _memfd("bwrap-args", b"".join(a.encode() + b"\0" for a in args))


def run_stage(
    job: Job,
    name: str,
    argv: Sequence[str],
    seconds: float,
    limits: Limits,
    *,
    index_writable: bool,
    device: str = "cpu",
    tick: Callable[[], None] | None = None,
) -> StageResult:
    """Run one stage in its allow-list root; every process of it is dead on return.

    The stage's wall clock is held by a watchdog process of its own, ``timeout -s KILL``
    (coreutils), bwrap's parent: at ``seconds`` it kills bwrap, whose init takes the stage's
    pid namespace with it, whatever the worker is doing; the worker only waits (and renews
    the run's heartbeat), and kills it itself ``WATCH_GRACE_SECONDS`` later should the
    watchdog have failed."""
    result = StageResult(name=name, argv=list(argv))
    unique = f"{job.root.parent.name}-{job.root.name}-{name}-{os.getpid()}-{time.monotonic_ns()}"  # never shared
    group = host.stage_cgroup(unique, pids=limits.processes, memory_bytes=limits.memory_bytes)
    binds = job.binds()
    read_only, writable = binds[:2], binds[3:]
    (writable if index_writable else read_only).append(binds[2])
    program = seccomp.program()
    filters = [] if program is None else [_memfd("bwrap-seccomp", program)]
    args = broot.bwrap_args(
        uid=job.uid, gid=job.gid, etc=job.etc, read_only=read_only, writable=writable, env=environment(job),
        argv=argv, tmpfs_bytes=limits.tmpfs_bytes, devices=broot.nvidia_devices() if device == "cuda" else (),
        seccomp_fd=filters[0] if filters else None,
    )  # fmt: skip
    split = args.index("--")  # bwrap takes options through the descriptor, the command on its own line
    descriptor = _args_fd(args[:split])
    started = time.monotonic()
    readers: list[_Capture] = []
    try:
        with subprocess.Popen(
            [TIMEOUT, "-s", "KILL", f"{seconds:.3f}s", broot.BWRAP, "--args", str(descriptor), *args[split:]],
            pass_fds=(descriptor, *filters),
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_pre_exec(limits, seconds, group.procs),  # noqa: PLW1509 (setsid, cgroup, setrlimit)
        ) as process:
            os.close(descriptor)
            descriptor = -1
            for kept in filters:
                os.close(kept)
            filters = []
            readers = [_Capture(process.stdout, limits.log_bytes), _Capture(process.stderr, limits.log_bytes)]
            for reader in readers:
                reader.start()
            _watch(process, result, seconds, tick)
            if process.poll() is None:
                process.kill()  # bwrap's init gets SIGKILL with it (--die-with-parent): the namespace ends
            group.kill()
            host.kill_uid(job.uid)
            process.wait()
            for reader in readers:
                reader.join(timeout=5)
    finally:
        if descriptor >= 0:
            os.close(descriptor)
        for kept in filters:
            os.close(kept)
        group.kill()
        host.kill_uid(job.uid)
        result.enforced = {"cgroups": group.enforced, "peak": group.peak(), "notes": group.notes}
        group.remove()
    result.seconds = round(time.monotonic() - started, 3)
    result.timed_out = result.timed_out or result.seconds >= seconds
    result.overran = result.seconds > seconds + OVERRUN_SECONDS
    if readers:
        result.stdout, result.stderr = bytes(readers[0].kept), bytes(readers[1].kept)
        result.dropped_bytes = readers[0].dropped + readers[1].dropped
    code = process.returncode
    result.exit_code = code
    if code is not None and code < 0:
        result.signal = signal.Signals(-code).name
    elif code is not None and code > 128:
        try:
            result.signal = signal.Signals(code - 128).name  # bwrap reports the child's signal so
        except ValueError:
            pass
    if result.killed:
        result.outcome = "killed"
    else:
        result.outcome = "timeout" if result.timed_out else "ok" if code == 0 else "failed"
    return result


TICK_SECONDS = 10.0


def _watch(process, result: StageResult, seconds: float, tick) -> None:
    """Wait for the stage (its watchdog ends it at ``seconds``), renewing the run's heartbeat
    every ``TICK_SECONDS``: nothing of the stage is looked at (its disk is the kernel's to
    bound), so the worker's CPU does not grow with what the stage holds."""
    deadline = time.monotonic() + seconds + WATCH_GRACE_SECONDS
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            result.timed_out = True
            return
        try:
            process.wait(timeout=min(TICK_SECONDS, remaining))
            return
        except subprocess.TimeoutExpired:
            pass
        if tick is not None:
            tick()


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
        return _stages(job, calls, limits, row_cap=row_cap, device=device, tick=tick)


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


def cleanup(root: Path) -> list[str]:
    """Remove a job folder (never raises; what stayed is returned): a filesystem still
    mounted in it (a worker that died mid-job) is unmounted first, never walked; what is
    left is the worker's own layout (the bundle's files, the corpus, ``etc``)."""
    left = [f"{point}: still mounted" for point in disk.unmount_under(Path(root))]
    return left or host.remove_tree(Path(root))
