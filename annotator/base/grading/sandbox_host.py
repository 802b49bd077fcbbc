"""What the bundle sandbox enforces from the host side, without Django: the capabilities the
worker needs (``CAPABILITIES``: in a container, exactly what it is given), one uid per job
(leased from a range with a lock file), a cgroup per stage (pids, memory and one CPU share; cgroup v1 or
v2, where the host has them), killing every process of a job's uid, and removing a job
folder a dead worker left (its filesystem unmounted first: ``sandbox_disk``).

Nothing here raises on a hostile tree: walks are iterative (a 100,000-deep chain of
folders is fine), never follow links, and every error is counted, not thrown.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from annotator.base.grading.sandbox_disk import unmount_under

# -------------------------------------------------------------------- capabilities

# What the worker does with root's capabilities, each measured by taking it away in a container
# (docs/deploy.md, "The bundles worker in a container"): a container's ``cap_add`` gives exactly
# these, and a worker that lacks one refuses bundle runs, naming it. Not CAP_KILL: every process
# of a stage is in bwrap's pid namespace, which the kernel empties when its init dies; the
# worker's own kill of a job's uid (``kill_uid``, ``StageCgroup.kill``) is a second net that has
# found nothing to kill in any run measured, and cannot signal another uid without it.
CAPABILITIES = {
    "CAP_CHOWN": (0, "hand the job's folders to its uid"),
    "CAP_DAC_OVERRIDE": (1, "reach the job's folders, which its uid owns"),
    "CAP_SETGID": (6, "switch to the job's gid"),
    "CAP_SETUID": (7, "switch to the job's uid"),
    "CAP_SETPCAP": (8, "empty each stage's capability bounding set"),
    "CAP_NET_ADMIN": (12, "bring up each stage's loopback"),
    "CAP_SYS_ADMIN": (21, "namespaces, mounts, the job's loop-mounted filesystem"),
}


def missing_capabilities(status: str | None = None) -> list[str]:
    """The capabilities of :data:`CAPABILITIES` this process does not hold (``CapEff`` of
    ``/proc/self/status``), each with what it is for."""
    if status is None:
        try:
            status = Path("/proc/self/status").read_text()
        except OSError:
            return ["every capability (/proc/self/status is unreadable)"]
    held = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("CapEff:")), 0)
    return [f"{name} ({why})" for name, (bit, why) in CAPABILITIES.items() if not held >> bit & 1]


# ------------------------------------------------------------------------ job uids


def parse_uid_range(text: str) -> range:
    """``"2000000-2000999"`` -> that range (inclusive); refuses root and empty ranges."""
    low, _, high = str(text).partition("-")
    first, last = int(low), int(high or low)
    if first <= 0 or last < first:
        raise ValueError(f"a sandbox uid range must be FIRST-LAST above 0, not {text!r}")
    return range(first, last + 1)


class NoFreeUid(RuntimeError):
    """Every uid of the range is held by a running job."""


@contextlib.contextmanager
def uid_lease(uids: range, lock_dir: Path) -> Iterator[int]:
    """Hold one uid of ``uids`` for the duration of a job: an exclusive ``flock`` on
    ``lock_dir/uid-N.lock`` (released by the kernel when the worker dies). Processes of
    the uid left by a worker that died are killed before the uid is handed out."""
    lock_dir = Path(lock_dir)
    lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(lock_dir, 0o700)
    start = (os.getpid() * 7919) % len(uids)  # spread concurrent workers over the range
    for offset in range(len(uids)):
        uid = uids[(start + offset) % len(uids)]
        descriptor = os.open(lock_dir / f"uid-{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            continue
        try:
            kill_uid(uid)
            yield uid
        finally:
            kill_uid(uid)
            os.close(descriptor)
        return
    raise NoFreeUid(f"all {len(uids)} sandbox uids ({uids.start}-{uids.stop - 1}) are in use")


def uid_lock_dir(base: Path) -> Path:
    """Where every worker (and test) of a machine leases job uids, under ``base`` (the
    sandbox folder): one place, so that no two jobs ever hold the same uid."""
    return Path(base) / "frameledger-sandbox-uids"


def processes_of(uid: int) -> list[int]:
    """Live (not zombie) pids whose real, effective, saved or filesystem uid is ``uid``."""
    found = []
    wanted = str(uid).encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as handle:
                zombie = False
                for line in handle:
                    if line.startswith(b"State:"):
                        zombie = b"Z" in line.split()[1:2]
                    elif line.startswith(b"Uid:"):
                        if wanted in line.split()[1:] and not zombie:
                            found.append(int(entry.name))
                        break
        except OSError:
            continue
    return found


def kill_uid(uid: int, seconds: float = 5.0) -> int:
    """SIGKILL every process of ``uid`` until none is left (or ``seconds`` pass);
    returns how many were signalled. Only ever used for a job's own uid."""
    if uid <= 0 or os.geteuid() != 0:
        return 0
    signalled, deadline = 0, time.monotonic() + seconds
    while pids := processes_of(uid):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                signalled += 1
        if time.monotonic() > deadline:
            break
        time.sleep(0.02)
    return signalled


# -------------------------------------------------------------------------- cgroups

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup(controller: str, cgroups: str | None = None, mountinfo: str | None = None) -> str:
    """This process's path in a v1 hierarchy, relative to where that hierarchy is mounted here.

    ``/proc/self/cgroup`` names the path from the hierarchy's true root; inside a container the
    hierarchy is mounted from the container's own cgroup (``/proc/self/mountinfo``'s root field,
    e.g. ``/libpod_parent/libpod-…``), so that prefix is taken off, or the stage's folder would be
    looked for where it does not exist."""
    path = "/"
    with contextlib.suppress(OSError):
        text = Path("/proc/self/cgroup").read_text() if cgroups is None else cgroups
        for line in text.splitlines():
            _, controllers, found = line.split(":", 2)
            if controller in controllers.split(","):
                path = found
                break
    root = _mount_root(controller, mountinfo)
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root) :] or "/"
    return path


def _mount_root(controller: str, mountinfo: str | None = None) -> str:
    """The root field of the cgroup mount that carries ``controller`` (v2's unified one for
    ``""``); ``/`` on a host."""
    with contextlib.suppress(OSError):
        text = Path("/proc/self/mountinfo").read_text() if mountinfo is None else mountinfo
        for line in text.splitlines():
            fields, _, rest = line.partition(" - ")
            parts, tail = fields.split(), rest.split()
            if len(parts) < 5 or len(tail) < 3:
                continue
            v2 = controller == "" and tail[0] == "cgroup2"
            if v2 or (tail[0] == "cgroup" and controller and controller in tail[2].split(",")):
                return parts[3]
    return "/"


# A stage's own controllers: pids.max, the memory limit, and one CPU share (the default
# weight, written out): the scheduler shares the CPUs between stages' groups, not between
# their processes, so a job running 64 busy processes gets no more than one running one.
CONTROLLERS = ("pids", "memory", "cpu")
CPU_SHARES_V1, CPU_WEIGHT_V2 = 1024, 100


def cgroup_support() -> dict[str, str]:
    """Which of pids/memory/cpu this host lets a root worker limit per stage: ``{"pids":
    "v1", "memory": "v2", ...}``; a controller that cannot be used is absent."""
    found: dict[str, str] = {}
    if os.geteuid() != 0:
        return found
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.is_file():
        enabled = set(unified.read_text().split())
        for name in CONTROLLERS:
            if name in enabled:
                found[name] = "v2"
        return found
    for name in CONTROLLERS:
        base = CGROUP_ROOT / name
        if (base / "cgroup.procs").is_file() and os.access(base, os.W_OK):
            found[name] = "v1"
    return found


# The controllers every stage must have, or nothing runs: ``FRAMELEDGER_SANDBOX_CGROUPS``
# (``pids,memory,cpu``; read from the environment: this module has no Django). Empty (the
# default): a stage runs with those the machine has, and the run's record says which. The
# compose file's bundles workers require all three, so that a container whose cgroup mounts are
# read-only refuses runs with the reason instead of running stages without their limits.
REQUIRED_ENV = "FRAMELEDGER_SANDBOX_CGROUPS"


def required_cgroups(text: str | None = None) -> tuple[str, ...]:
    """The controllers :data:`REQUIRED_ENV` requires (``ValueError`` on an unknown name)."""
    text = os.environ.get(REQUIRED_ENV, "") if text is None else text
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in CONTROLLERS]
    if unknown:
        raise ValueError(f"{REQUIRED_ENV} names {', '.join(unknown)}: known are {', '.join(CONTROLLERS)}")
    return names


class CgroupsRefused(RuntimeError):
    """A stage could not get a cgroup :data:`REQUIRED_ENV` requires: it is not run."""


def cgroup_problem(controller: str) -> str:
    """Why ``controller`` cannot be used for stages here, in a few words ('' when it can)."""
    if os.geteuid() != 0:
        return "the worker is not root"
    if (CGROUP_ROOT / "cgroup.controllers").is_file():
        base = CGROUP_ROOT / _own_cgroup("").lstrip("/")
        if controller not in (CGROUP_ROOT / "cgroup.controllers").read_text().split():
            return f"cgroup v2 has no {controller} controller"
    else:
        base = CGROUP_ROOT / controller / _own_cgroup(controller).lstrip("/")
        if not (base / "cgroup.procs").is_file():
            return f"no cgroup v1 {controller} hierarchy at {CGROUP_ROOT / controller}"
    with contextlib.suppress(OSError):
        if os.statvfs(base).f_flag & os.ST_RDONLY:
            return f"{base} is mounted read-only"
    if not os.access(base, os.W_OK):
        return f"{base} is not writable"
    return ""


@dataclass
class StageCgroup:
    """The cgroups of one stage: ``procs`` are the ``cgroup.procs`` files a new process
    joins (in its pre-exec hook), ``folders`` what is killed and removed at the end."""

    folders: list[Path] = field(default_factory=list)
    enforced: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def procs(self) -> list[bytes]:
        return [bytes(folder / "cgroup.procs") for folder in self.folders]

    def peak(self) -> dict:
        figures = {}
        for folder in self.folders:
            for name in ("memory.max_usage_in_bytes", "memory.peak", "pids.events", "memory.failcnt"):
                with contextlib.suppress(OSError, ValueError):
                    text = (folder / name).read_text().strip()
                    figures[name] = int(text) if text.isdigit() else text
        return figures

    def kill(self, seconds: float = 5.0) -> None:
        """Every process in the stage's cgroups gets SIGKILL until they are empty."""
        deadline = time.monotonic() + seconds
        for folder in self.folders:
            if (folder / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (folder / "cgroup.kill").write_text("1")
            while True:
                try:
                    pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids or time.monotonic() > deadline:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.02)

    def remove(self) -> None:
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def remove_stale_cgroups(older_than: float = 3600.0) -> int:
    """Remove the stage cgroups a killed worker left (empty ones only: the kernel refuses
    to remove a cgroup that still holds a process), older than ``older_than`` seconds so
    that no stage between making its cgroup and joining it loses it."""
    removed = 0
    for controller, version in cgroup_support().items():
        own = _own_cgroup("" if version == "v2" else controller).lstrip("/")
        base = CGROUP_ROOT / own if version == "v2" else CGROUP_ROOT / controller / own
        for folder in base.glob("frameledger-*"):
            try:
                if time.time() - folder.stat().st_mtime > older_than:
                    folder.rmdir()
                    removed += 1
            except OSError:
                continue
    return removed


def stage_cgroup(name: str, *, pids: int, memory_bytes: int) -> StageCgroup:
    """Make the stage's cgroups (under the worker's own, ``frameledger-<name>``) with
    ``pids.max``, the memory limit and one CPU share; what could not be made is noted,
    never fatal."""
    group = StageCgroup()
    for controller, version in cgroup_support().items():
        if version == "v2":
            base = CGROUP_ROOT / _own_cgroup("").lstrip("/")
            files = {
                "pids": ("pids.max", pids),
                "memory": ("memory.max", memory_bytes),
                "cpu": ("cpu.weight", CPU_WEIGHT_V2),
            }
        else:
            base = CGROUP_ROOT / controller / _own_cgroup(controller).lstrip("/")
            files = {
                "pids": ("pids.max", pids),
                "memory": ("memory.limit_in_bytes", memory_bytes),
                "cpu": ("cpu.shares", CPU_SHARES_V1),
            }
        folder = base / f"frameledger-{name}"
        setting, value = files[controller]
        try:
            folder.mkdir(exist_ok=True)
            if value:
                (folder / setting).write_text(str(value))
                if controller == "memory" and version == "v1":
                    with contextlib.suppress(OSError):  # no swap past the limit either, where accounted
                        (folder / "memory.memsw.limit_in_bytes").write_text(str(value))
                if controller == "memory" and version == "v2":
                    with contextlib.suppress(OSError):
                        (folder / "memory.swap.max").write_text("0")
        except OSError as error:
            group.notes.append(f"cgroup {controller} ({version}) unusable: {error}")
            with contextlib.suppress(OSError):
                folder.rmdir()
            continue
        if folder not in group.folders:
            group.folders.append(folder)
        group.enforced[controller] = f"{version} {setting}={value or 'max'}"
    return group


# ----------------------------------------------------------------------- job files


JOB_LOCK = ".frameledger-job.lock"


def hold_job_folder(folder: Path) -> int:
    """Lock a fresh job folder for as long as the returned descriptor is open (the
    kernel drops the lock when the worker dies)."""
    descriptor = os.open(Path(folder) / JOB_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    return descriptor


def remove_stale_job_folders(base: Path, prefix: str, grace_seconds: float = 120.0) -> list[str]:
    """Remove the job folders under ``base`` that no live worker holds: a worker killed
    mid-run leaves its folder, and the next job on the machine removes it. A folder
    without its lock file yet (just made) is left alone for ``grace_seconds``."""
    removed = []
    for folder in Path(base).glob(f"{prefix}*"):
        try:
            info = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        try:
            descriptor = os.open(folder / JOB_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            if time.time() - info.st_mtime > grace_seconds and not unmount_under(folder):
                remove_tree(folder)
                removed.append(str(folder))
            continue
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            continue  # a live worker's job
        try:
            if not unmount_under(folder):  # the job's filesystem, never walked
                remove_tree(folder)
                removed.append(str(folder))
        finally:
            os.close(descriptor)
    return removed


def walk(root: Path) -> Iterator[tuple[os.DirEntry, bool]]:
    """Every entry under ``root`` (iteratively, links never followed), with whether it
    is a real folder. Unreadable folders are skipped."""
    stack = [os.fspath(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_folder = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_folder = False
                    if is_folder:
                        stack.append(entry.path)
                    yield entry, is_folder
        except OSError:
            continue


def remove_tree(root: Path) -> list[str]:
    """Remove ``root`` and everything in it: iteratively, without following links,
    whatever the modes (folders are made 0700 first), FIFOs and sockets included.
    Never raises; returns what could not be removed."""
    root = Path(root)
    problems: list[str] = []
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return problems
    except OSError as error:
        return [f"{root}: {error}"]
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            os.unlink(root)
        return problems
    folders = [os.fspath(root)]
    stack = [os.fspath(root)]
    while stack:  # unlink every non-folder, remember folders in the order found
        folder = stack.pop()
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700, follow_symlinks=False)
        try:
            with os.scandir(folder) as entries:
                children = list(entries)
        except OSError as error:
            problems.append(f"{folder}: {error}")
            continue
        for entry in children:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_folder = False
            if is_folder:
                stack.append(entry.path)
                folders.append(entry.path)
            else:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass
                except OSError as error:
                    problems.append(f"{entry.path}: {error}")
    for folder in reversed(folders):  # children were found after their parents
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            pass
        except OSError as error:
            if error.errno != errno.ENOENT:
                problems.append(f"{folder}: {error}")
    return problems[:20]


def complete_rows(path: Path, byte_cap: int) -> tuple[bytes, str]:
    """The complete lines (ending in a newline) of an output file, up to ``byte_cap``,
    and a note when it was not a plain file (a link, a folder, a FIFO: no rows)."""
    try:  # the bundle owns the folder: never follow a link it put there, read only a plain file
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return b"", ""
    except OSError as error:
        if error.errno == errno.ELOOP:
            return b"", f"{path.parent.name}/{path.name} is a link, not a plain file (never followed): no rows"
        return b"", f"{path.parent.name}/{path.name} could not be opened ({error.strerror}): no rows"
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a plain file"
            return b"", f"{path.parent.name}/{path.name} is {kind}: no rows"
        chunks, size = [], 0
        while size <= byte_cap and (chunk := os.read(descriptor, min(1024**2, byte_cap + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    end = data.rfind(b"\n", 0, byte_cap)
    return (data[: end + 1] if end >= 0 else b""), ""
