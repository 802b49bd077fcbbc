"""Running an executable moment-search bundle (``build.sh`` / ``run.sh``) under the
seed's contract, without Django.

The layout of one job (``root``, made by :func:`prepare`; the sandbox user is ``uid``):

| path | owner, mode | what |
|---|---|---|
| ``app/`` | root, read-only | the bundle's files (``build.sh`` and ``run.sh`` executable) |
| ``task/data/corpus/`` | root, read-only | ``records.jsonl`` and the features it names |
| ``task/queries/call-N.jsonl`` | root, read-only | the requests of call N (at most ``requests_per_call``) |
| ``work/`` | root, 0755 | the index parent: not writable by the bundle |
| ``work/index/`` | sandbox during build, root and read-only afterwards | the index |
| ``out/``, ``tmp/``, ``cache/`` | sandbox | outputs, ``TMPDIR``, the cache folder |

Each stage runs as one process group: ``unshare --net --mount --pid --fork`` (a new
network namespace with only a loopback that is down, a private mount table, its own
process ids so that nothing outlives the stage) then ``setpriv`` to the sandbox user with
no supplementary groups and ``no_new_privs``; rlimits (processes, file size, CPU seconds,
address space, open files) are set before. A wall-clock limit kills the whole group (and
with it the pid namespace). stdout and stderr are kept up to ``log_bytes`` each; the rest
is counted and dropped. The environment is rebuilt from nothing (no database URL, no
secrets). What the machine allows is detected at run time (:func:`probe`) and recorded
with every stage: without root there is no user switch and no namespaces, and the record
says so.

The ground truth never enters ``root``: the caller scores the rows after the bundle has
finished, in its own process. :func:`readable_by` checks, before anything runs, that the
paths the caller names as secret (database files, media) cannot be read by the sandbox
user; the job refuses to run otherwise. With namespaces, the ``masks`` the caller names
are also hidden in the stage's private mount table (an empty read-only tmpfs over each
folder, ``/dev/null`` over each file), so even world-readable answer keys (published
datasets in the repository) are out of reach.
"""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import threading
import time
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

NOBODY = 65534
ENTRY_POINTS = ("build.sh", "run.sh")
MAX_BUNDLE_ENTRIES = 10_000
MAX_BUNDLE_BYTES = 2 * 1024**3


class BundleError(ValueError):
    """The bundle cannot be run (not a zip, no build.sh/run.sh, an unsafe path)."""


class SandboxRefused(RuntimeError):
    """The machine is set up so that the bundle could read something it must not."""


@dataclass(frozen=True)
class Limits:
    build_seconds: float = 3600.0
    call_seconds: float = 2700.0
    requests_per_call: int = 250
    processes: int = 512  # RLIMIT_NPROC of the sandbox user (fork bombs)
    file_bytes: int = 16 * 1024**3  # RLIMIT_FSIZE: the largest file a stage may write
    address_space_bytes: int = 32 * 1024**3  # RLIMIT_AS per process; 0 = none (CUDA reserves more)
    open_files: int = 4096
    log_bytes: int = 256 * 1024  # kept per stream and stage

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class StageResult:
    name: str
    argv: list[str]
    seconds: float = 0.0
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    stdout: bytes = b""
    stderr: bytes = b""
    dropped_bytes: int = 0
    outcome: str = ""  # ok | timeout | failed | killed by SIGXFSZ ...
    requests: int = 0
    rows: int = 0

    def as_dict(self) -> dict:
        body = asdict(self)
        body["stdout"] = self.stdout.decode("utf-8", "replace")
        body["stderr"] = self.stderr.decode("utf-8", "replace")
        return body


@dataclass(frozen=True)
class Enforcement:
    """What the machine lets the runner enforce, detected at run time."""

    user_switch: bool
    namespaces: bool
    uid: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict:
        return {
            "user": self.uid if self.user_switch else f"{os.getuid()} (the worker's own: not root, cannot switch)",
            "network": "new network namespace (loopback down)" if self.namespaces else "not isolated",
            "pid_namespace": self.namespaces,
            "notes": list(self.notes),
        }


@lru_cache(maxsize=4)
def probe(uid: int = NOBODY) -> Enforcement:
    notes = []
    root = os.geteuid() == 0
    if not root:
        notes.append("the worker is not root: the bundle runs as the worker's user, with its network")
    tools = all(shutil.which(name) for name in ("unshare", "setpriv"))
    namespaces = False
    if root and tools:
        check = subprocess.run(
            ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "true"], capture_output=True
        )
        namespaces = check.returncode == 0
        if not namespaces:
            notes.append("unshare failed: " + check.stderr.decode(errors="replace").strip()[:200])
    elif root:
        notes.append("unshare or setpriv is missing (util-linux)")
    if root and not namespaces:
        notes.append("no namespaces: the network is open and background processes are killed by process group only")
    return Enforcement(user_switch=root and tools, namespaces=namespaces, uid=uid, notes=tuple(notes))


# ------------------------------------------------------------------ file permissions


def readable_by(path: str | os.PathLike, uid: int, gid: int) -> bool:
    """Whether ``uid`` (primary group ``gid``, no others) could read ``path``: every
    folder on the way must be searchable and the file itself readable."""
    path = Path(path).resolve()
    if not path.exists():
        return False
    chain = [*reversed(path.parents), path]
    for number, item in enumerate(chain):
        info = item.stat()
        need = stat.S_IXOTH if number < len(chain) - 1 or item.is_dir() else stat.S_IROTH
        if item == path and item.is_dir():
            need |= stat.S_IROTH
        shift = 6 if info.st_uid == uid else 3 if info.st_gid == gid else 0
        if not (info.st_mode >> shift) & need:
            return False
    return True


def check_secrets(paths: Iterable[str | os.PathLike], uid: int, gid: int) -> None:
    exposed = [str(p) for p in paths if p and readable_by(p, uid, gid)]
    if exposed:
        raise SandboxRefused(
            f"the sandbox user {uid} could read {', '.join(exposed)}: make it unreadable "
            "(e.g. chmod 700 on its folder) before executable bundles are run"
        )


# ------------------------------------------------------------------------- the layout


def extract(bundle: bytes, target: Path) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(bundle))
    except zipfile.BadZipFile:
        raise BundleError("the bundle is not a zip file") from None
    infos = archive.infolist()
    if len(infos) > MAX_BUNDLE_ENTRIES or sum(i.file_size for i in infos) > MAX_BUNDLE_BYTES:
        raise BundleError(f"the bundle holds more than {MAX_BUNDLE_ENTRIES} entries or {MAX_BUNDLE_BYTES} bytes")
    infos = [i for i in infos if not i.filename.startswith("__MACOSX/")]
    names = [i.filename for i in infos if not i.is_dir()]
    prefix = os.path.commonpath(names) if len(names) > 1 else os.path.dirname(names[0]) if names else ""
    if prefix and any(n == prefix for n in names):
        prefix = os.path.dirname(prefix)
    for info in infos:
        if info.is_dir():
            continue
        relative = os.path.relpath(info.filename, prefix) if prefix else info.filename
        parts = Path(relative).parts
        if relative.startswith("/") or ".." in parts or not parts:
            raise BundleError(f"unsafe path in the bundle: {info.filename!r}")
        destination = target.joinpath(*parts)
        destination.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as source, open(destination, "wb") as sink:
            shutil.copyfileobj(source, sink)
        mode = (info.external_attr >> 16) & 0o111
        os.chmod(destination, 0o755 if mode or destination.name in ENTRY_POINTS else 0o644)
    missing = [name for name in ENTRY_POINTS if not (target / name).is_file()]
    if missing:
        raise BundleError(f"the bundle has no {' and no '.join(missing)} at its top level")


def _own(path: Path, uid: int, gid: int, mode: int) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)
    if os.geteuid() == 0:
        os.chown(path, uid, gid)


@dataclass
class Job:
    root: Path
    uid: int = NOBODY
    gid: int = NOBODY

    @property
    def app(self) -> Path:
        return self.root / "app"

    @property
    def corpus(self) -> Path:
        return self.root / "task" / "data" / "corpus"

    @property
    def index(self) -> Path:
        return self.root / "work" / "index"

    def call_queries(self, number: int) -> Path:
        return self.root / "task" / "queries" / f"call-{number}.jsonl"

    def call_output(self, number: int) -> Path:
        return self.root / "out" / f"call-{number}.jsonl"


def prepare(
    root: Path,
    bundle: bytes,
    records: Sequence[dict],
    features: dict[str, Path],
    requests: Sequence[dict],
    *,
    requests_per_call: int,
    uid: int = NOBODY,
    gid: int = NOBODY,
) -> tuple[Job, int]:
    """Lay out a job under ``root`` (created, must not exist). Returns the job and the
    number of calls. ``features`` maps names inside the corpus folder to files."""
    job = Job(Path(root), uid, gid)
    job.root.mkdir(mode=0o755)
    os.chmod(job.root, 0o755)
    if os.geteuid() == 0 and not readable_by(job.root, uid, gid):
        raise SandboxRefused(f"the sandbox user {uid} cannot reach {job.root}: every folder above it needs o+x")
    extract(bundle, job.app)
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
    for folder in (job.root / "app", job.root / "task"):
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir():
                os.chmod(path, 0o755)
            elif path.parent.name != "app" or path.name not in ENTRY_POINTS:
                os.chmod(path, path.stat().st_mode & 0o755 | 0o444)
    _own(job.root / "work", os.geteuid(), os.getegid(), 0o755)
    for name, mode in (("work/index", 0o755), ("out", 0o755), ("tmp", 0o700), ("cache", 0o700)):
        _own(job.root / name, uid, gid, mode)
    return job, calls


def freeze_index(job: Job) -> None:
    """After the build: the index belongs to root and nobody may write it."""
    for path in [job.index, *job.index.rglob("*")]:
        if path.is_symlink():
            continue
        if os.geteuid() == 0:
            os.chown(path, 0, 0, follow_symlinks=False)
        os.chmod(path, 0o555 if path.is_dir() else 0o444)


# ------------------------------------------------------------------------ the process


def _interpreter_mount(job: Job, enforcement: Enforcement) -> tuple[list[str], str]:
    """The folder that holds a ``python`` the sandbox user can run, and the mount that
    makes it visible when the worker's interpreter lives in a folder it cannot enter."""
    prefix = Path(sys.base_prefix)
    executable = Path(sys.executable).resolve()
    if not enforcement.user_switch or readable_by(executable, job.uid, job.gid):
        return [], str(executable.parent)
    if not enforcement.namespaces:
        return [], str(executable.parent)
    target = job.root / "python"
    target.mkdir(mode=0o755, exist_ok=True)
    return [str(prefix), str(target)], str(target / executable.parent.relative_to(prefix))


def environment(job: Job, python_bin: str) -> dict:
    site = sysconfig.get_paths()["purelib"]
    env = {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": site,
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(job.root / "tmp"),
        "TMPDIR": str(job.root / "tmp"),
        "XDG_CACHE_HOME": str(job.root / "cache"),
        "RETRIEVAL_CACHE_DIR": str(job.root / "cache"),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": os.environ.get("FRAMELEDGER_SANDBOX_THREADS", "1"),
    }
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


# Runs as root inside the new namespaces, before the user switch: bind the interpreter
# (when needed), hide each masked path (an empty read-only tmpfs over a folder,
# /dev/null over a file), then exec the rest. A mount that fails ends the stage (125).
LAUNCH = """
if [ -n "$1" ]; then mount --bind -o ro "$1" "$2" || exit 125; fi
shift 2
n=$1; shift
while [ "$n" -gt 0 ]; do
  if [ -d "$1" ]; then mount -t tmpfs -o ro,size=4k,mode=0555 masked "$1" || exit 125
  elif [ -e "$1" ]; then mount --bind /dev/null "$1" || exit 125; fi
  shift; n=$((n - 1))
done
exec "$@"
"""


def command(
    job: Job, enforcement: Enforcement, argv: Sequence[str], mount: Sequence[str], masks: Sequence[str] = ()
) -> list[str]:
    if not enforcement.user_switch:
        return list(argv)
    drop = ["setpriv", f"--reuid={job.uid}", f"--regid={job.gid}", "--clear-groups", "--no-new-privs", "--"]
    if not enforcement.namespaces:
        return [*drop, *argv]
    isolate = ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "--"]
    hidden = [str(p) for p in masks if not _contains(p, job.root)]
    bind = list(mount) or ["", ""]
    return [*isolate, "sh", "-c", LAUNCH, "launch", *bind, str(len(hidden)), *hidden, *drop, *argv]


def _contains(outer: str | os.PathLike, inner: Path) -> bool:
    """Whether ``inner`` lies in ``outer`` (masking it would hide the job itself)."""
    try:
        inner.resolve().relative_to(Path(outer).resolve())
    except ValueError:
        return False
    return True


def _limits(limits: Limits, seconds: float):
    # CPU seconds: every core busy for the whole stage is the most a stage can use
    # legitimately (RLIMIT_CPU counts all threads of a process).
    cpu = int(seconds * (os.cpu_count() or 1)) + 1
    memory = limits.address_space_bytes or resource.RLIM_INFINITY

    def apply() -> None:
        os.setsid()
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
        while chunk := self.stream.read(65536):
            room = self.cap - len(self.kept)
            self.kept += chunk[: max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)


def run_stage(
    job: Job,
    name: str,
    argv: Sequence[str],
    seconds: float,
    limits: Limits,
    enforcement: Enforcement,
    masks: Sequence[str] = (),
) -> StageResult:
    """Run one stage; kill its process group after ``seconds`` of wall clock."""
    mount, python_bin = _interpreter_mount(job, enforcement)
    full = command(job, enforcement, argv, mount, masks)
    result = StageResult(name=name, argv=list(argv))
    started = time.monotonic()
    process = subprocess.Popen(
        full,
        cwd=job.root / "tmp",
        env=environment(job, python_bin),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limits(limits, seconds),  # noqa: PLW1509 (fork-safe: setsid and setrlimit only)
    )
    readers = [_Capture(process.stdout, limits.log_bytes), _Capture(process.stderr, limits.log_bytes)]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        result.timed_out = True
        _kill_group(process.pid)
        process.wait()
    _kill_group(process.pid)  # whatever the stage left behind in its group
    for reader in readers:
        reader.join(timeout=5)
    result.seconds = round(time.monotonic() - started, 3)
    result.stdout, result.stderr = bytes(readers[0].kept), bytes(readers[1].kept)
    result.dropped_bytes = readers[0].dropped + readers[1].dropped
    code = process.returncode
    result.exit_code = code
    if code is not None and code < 0:
        result.signal = signal.Signals(-code).name
    elif code is not None and code > 128 and enforcement.namespaces:
        try:
            result.signal = signal.Signals(code - 128).name  # unshare reports the child's signal
        except ValueError:
            pass
    result.outcome = "timeout" if result.timed_out else "ok" if code == 0 else "failed"
    return result


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def complete_rows(path: Path, byte_cap: int) -> bytes:
    """The complete lines (ending in a newline) of an output file, up to ``byte_cap``."""
    try:  # the bundle owns the folder: never follow a link it put there, read only a plain file
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return b""
        data = handle.read(byte_cap + 1)
    end = data.rfind(b"\n", 0, byte_cap)
    return data[: end + 1] if end >= 0 else b""


def run_bundle(
    job: Job, calls: int, limits: Limits, *, row_cap: int, masks: Sequence[str] = ()
) -> tuple[list[StageResult], bytes]:
    """Build, then each call; the rows that count, joined. A build that fails or times
    out ends the job (no rows); a call that fails without a timeout loses its rows; a
    call that times out keeps the complete rows it wrote."""
    enforcement = probe(job.uid)
    app = str(job.app)
    stages = []
    build = run_stage(
        job,
        "build",
        [f"{app}/build.sh", "--corpus", str(job.corpus), "--index-dir", str(job.index)],
        limits.build_seconds,
        limits,
        enforcement,
        masks,
    )
    stages.append(build)
    freeze_index(job)
    if build.outcome != "ok":
        return stages, b""
    rows = b""
    for number in range(1, calls + 1):
        queries = job.call_queries(number)
        argv = [f"{app}/run.sh", "--index-dir", str(job.index), "--queries", str(queries)]
        stage = run_stage(
            job,
            f"call-{number}",
            [*argv, "--output", str(job.call_output(number))],
            limits.call_seconds,
            limits,
            enforcement,
            masks,
        )
        stage.requests = sum(1 for line in queries.read_text().splitlines() if line.strip())
        kept = complete_rows(job.call_output(number), row_cap) if stage.outcome != "failed" else b""
        stage.rows = kept.count(b"\n")
        rows += kept
        stages.append(stage)
    return stages, rows


def cleanup(root: Path) -> None:
    """Remove a job folder, read-only parts included."""
    for path in [root, *Path(root).rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            os.chmod(path, 0o700)
    shutil.rmtree(root, ignore_errors=True)
