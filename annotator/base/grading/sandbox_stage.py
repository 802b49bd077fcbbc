"""One bundle stage as a process, without Django: the job's layout (:class:`Job`, what each
host folder is inside), the stage's limits and result, and :func:`run_stage`, which runs one
command in the stage's allow-list root under its watchdog, its cgroups and rlimits, and
captures its logs. ``sandbox`` lays out jobs and runs bundles with it."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from annotator.base.grading import sandbox_host as host
from annotator.base.grading import sandbox_root as broot
from annotator.base.grading import sandbox_seccomp as seccomp

GiB = 1024**3


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
    log_file_bytes: int = 64 * 1024**2  # what a stage's log file of each stream may take (a tmpfs each)
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
    logs = property(lambda self: self.root / "logs")  # a tmpfs: each stage's stdout and stderr, as files
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
            (self.logs, broot.INSIDE / "logs"),
        ]


def inside(path: Path, job: Job) -> str:
    """A job path as the bundle sees it."""
    for folder, seen in job.binds():
        try:
            return str(seen / Path(path).relative_to(folder))
        except ValueError:
            continue
    raise ValueError(f"{path} is not in the job's folders")


def environment(job: Job, device: str = "cpu") -> dict:
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
    if device == "cuda":
        # A CUDA host may find its driver's libcuda through LD_LIBRARY_PATH rather than
        # ld.so.cache (an NVIDIA container's /usr/local/nvidia/lib64): the folders of it
        # that exist inside the root (under /usr, bound read-only) are passed on, no other.
        # (Where ld.so.cache lists the driver, as on the H200 machine of docs/grading.md, it is
        # found without them.)
        kept = [
            folder
            for folder in os.environ.get("LD_LIBRARY_PATH", "").split(":")
            if folder.startswith("/usr/") and os.path.isdir(folder)
        ]
        if kept:
            env["LD_LIBRARY_PATH"] = ":".join(kept)
    return env


TIMEOUT = "/usr/bin/timeout"  # coreutils
LOGS = (
    "each stream a file on a log filesystem of its own (/job/logs/stdout, /job/logs/stderr: a tmpfs of "
    "limits.log_file_bytes each, ENOSPC past it); the first limits.log_bytes of each read once at the "
    "stage's end, nothing read while it runs"
)
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
    """Reads a pipe to its end, keeping the first ``cap`` bytes. Only bwrap's and the log
    wrapper's own messages come this way: the stage's processes write to their log files."""

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


# The stage's first process (the job's uid, inside): its stdout and stderr become the stage's log
# files on the job's filesystem, then the command runs. Nothing of the job runs before it.
LOG_WRAPPER = 'exec >"$1" 2>"$2" </dev/null; shift 2; exec "$@"'
SANDBOX_MESSAGES_BYTES = 64 * 1024


@dataclass
class _Logs:
    """The stage's two log files on the job's log filesystem (``sandbox_disk.mount_logs``):
    made by the worker in a folder the job cannot change, opened by it before the stage starts,
    written by the stage through the wrapper, read once at its end, then removed."""

    paths: list[Path]
    inside: list[str]
    descriptors: list[int]

    @classmethod
    def make(cls, job: Job, name: str) -> _Logs:
        paths, descriptors = [job.logs / stream / name for stream in ("stdout", "stderr")], []
        for path in paths:
            created = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            os.fchown(created, job.uid, job.gid)
            os.close(created)
            descriptors.append(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC))
        return cls(paths, [inside(p, job) for p in paths], descriptors)

    def read(self, cap: int) -> list[tuple[bytes, int]]:
        """(the first ``cap`` bytes, the bytes past them) of each file; one read each."""
        found = []
        for descriptor in self.descriptors:
            kept = os.pread(descriptor, cap, 0)
            found.append((kept, max(os.fstat(descriptor).st_size - len(kept), 0)))
        return found

    def close(self) -> None:
        for descriptor in self.descriptors:
            os.close(descriptor)
        self.descriptors = []
        for path in self.paths:  # every process of the stage is dead: the space is free again
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


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
    logs = _Logs.make(job, name)
    group = host.stage_cgroup(unique, pids=limits.processes, memory_bytes=limits.memory_bytes)
    missing = [controller for controller in host.required_cgroups() if controller not in group.enforced]
    if missing:  # FRAMELEDGER_SANDBOX_CGROUPS: never a stage without the limits it requires
        group.remove()
        raise host.CgroupsRefused(
            f"stage {name}: no {', '.join(missing)} cgroup of its own ({'; '.join(group.notes) or 'unusable'}), "
            f"and {host.REQUIRED_ENV} requires it: the stage is not run"
        )
    binds = job.binds()
    read_only, writable = binds[:2], binds[3:]
    (writable if index_writable else read_only).append(binds[2])
    program = seccomp.program()
    filters = [] if program is None else [_memfd("bwrap-seccomp", program)]
    args = broot.bwrap_args(
        uid=job.uid, gid=job.gid, etc=job.etc, read_only=read_only, writable=writable,
        env=environment(job, device), argv=["/bin/sh", "-c", LOG_WRAPPER, "stage-logs", *logs.inside, *argv],
        tmpfs_bytes=limits.tmpfs_bytes, devices=broot.nvidia_devices() if device == "cuda" else (),
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
            # bwrap's, setpriv's and the wrapper's own messages: the stage's processes write
            # to their log files (the kernel holds them to the job's filesystem), never here.
            readers = [
                _Capture(process.stdout, SANDBOX_MESSAGES_BYTES),
                _Capture(process.stderr, SANDBOX_MESSAGES_BYTES),
            ]
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
        (result.stdout, out_past), (result.stderr, err_past) = logs.read(limits.log_bytes)
        result.dropped_bytes = out_past + err_past
    finally:
        logs.close()
        if descriptor >= 0:
            os.close(descriptor)
        for kept in filters:
            os.close(kept)
        group.kill()
        host.kill_uid(job.uid)
        result.enforced = {"cgroups": group.enforced, "peak": group.peak(), "notes": group.notes, "logs": LOGS}
        group.remove()
    result.seconds = round(time.monotonic() - started, 3)
    result.timed_out = result.timed_out or result.seconds >= seconds
    result.overran = result.seconds > seconds + OVERRUN_SECONDS
    messages = b"".join(bytes(r.kept) for r in readers)
    if messages:  # after the stage's own stderr, marked as the sandbox's
        result.stderr += b"\n[sandbox] " + messages
        result.dropped_bytes += sum(r.dropped for r in readers)
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
