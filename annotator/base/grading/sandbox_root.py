"""The allow-list root of one bundle stage, built by bubblewrap (``bwrap``, Debian's
``bubblewrap`` package, the sandbox under Flatpak), without Django.

Inside a stage exactly this exists (everything else of the host is absent, not masked):

| path inside | what | how |
|---|---|---|
| ``/usr``; ``/bin`` ``/sbin`` ``/lib`` ``/lib64`` (links into it, as on the host) | programs, libraries | read-only |
| ``/usr/local/etc`` | empty (the host's holds configuration: an ``npmrc``, a ``pip.conf``) | tmpfs |
| ``/etc`` | ``passwd``/``group`` (root, nobody, the job's uid), ``hosts``, ``ld.so.cache`` | a copy, read-only |
| ``/opt/python`` | the worker's Python installation when it is not under ``/usr`` | read-only bind |
| ``/opt/site-packages`` | the worker's site-packages (numpy, torch), ``PYTHONPATH`` | read-only bind |
| ``/job/app``, ``/job/task`` | the bundle, the corpus and requests | read-only bind |
| ``/job/work/index`` | the index | read-write during the build, read-only in the calls |
| ``/job/out``, ``/job/tmp`` (``HOME``, ``TMPDIR``), ``/job/cache`` | the stage's writable folders | read-write bind |
| ``/proc``, ``/dev`` | a fresh ``proc`` of the stage's pid namespace, a minimal ``/dev`` | bwrap |
| ``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run`` | private, size-limited tmpfs, gone with the stage | bwrap |

bwrap runs as root (so that it can bind the worker's runtime wherever it lives) with new
pid, network, IPC, UTS and cgroup namespaces (``--unshare-all`` less the user namespace:
one would map the job's uid onto root's outside), ``--die-with-parent``,
``--new-session``, every capability dropped but the three ``setpriv`` needs to become
the job's uid (with no groups, ``no_new_privs``, empty bounding and inheritable sets), and
its arguments passed through a file descriptor (``--args``), so that ``/proc/1/cmdline``
names no host path. A seccomp filter (``--seccomp FD``, ``sandbox_seccomp``) refuses at least
what Docker's default profile refuses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Debian's bubblewrap; FRAMELEDGER_SANDBOX_BWRAP names another build of it (read from the
# environment: this module has no Django).
BWRAP = os.environ.get("FRAMELEDGER_SANDBOX_BWRAP", "/usr/bin/bwrap")
SETPRIV = "/usr/bin/setpriv"
INSIDE = Path("/job")
PYTHON_INSIDE = "/opt/python"
SITE_INSIDE = "/opt/site-packages"
# The root's links into /usr, as the host has them (a merged-/usr Debian: all links).
TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Host configuration inside /usr: an empty folder in its place, like /etc's minimal copy.
USR_CONFIG = ("/usr/local/etc",)


@dataclass(frozen=True)
class Runtime:
    """The Python a bundle is given: read-only binds ``(host, inside)``, the folder of
    its ``python`` inside, and ``PYTHONPATH`` inside."""

    binds: tuple[tuple[str, str], ...]
    python_bin: str
    pythonpath: str


def _under(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    """The worker's interpreter and site-packages, bound at neutral paths: nothing
    inside names the checkout (a virtual environment usually lives in it)."""
    prefix = Path(sys.base_prefix).resolve()
    executable = Path(sys.executable).resolve()
    binds: list[tuple[str, str]] = []
    if _under(prefix, Path("/usr")):
        python_bin = str(executable.parent)
        moved = prefix
    else:
        binds.append((str(prefix), PYTHON_INSIDE))
        python_bin = (
            str(Path(PYTHON_INSIDE) / executable.parent.relative_to(prefix))
            if _under(executable, prefix)
            else f"{PYTHON_INSIDE}/bin"
        )
        moved = Path(PYTHON_INSIDE)
    paths = []
    sites = dict.fromkeys(Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib"))
    for number, site in enumerate(sites):
        if _under(site, Path("/usr")):
            paths.append(str(site))
        elif _under(site, prefix):
            paths.append(str(moved / site.relative_to(prefix)))
        else:
            inside = SITE_INSIDE if number == 0 else f"{SITE_INSIDE}-{number}"
            binds.append((str(site), inside))
            paths.append(inside)
    return Runtime(tuple(binds), python_bin, ":".join(paths))


@lru_cache(maxsize=1)
def bwrap_version() -> str:
    try:
        found = subprocess.run([BWRAP, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


ETC_COPIED = ("ld.so.cache", "ld.so.conf", "localtime")
EMPTY = ".empty"  # in the job's etc/: what a masked /proc file reads as
# Host-wide facts in the stage's fresh /proc that no bundle needs: the kernel's command line and
# build configuration, its symbol table, the host's boot id and the taint flags. The rest of
# /proc stays (docs/grading.md says why, file by file).
MASKED_PROC = (
    "/proc/cmdline", "/proc/config.gz", "/proc/kallsyms", "/proc/modules", "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/tainted", "/proc/timer_list", "/proc/sched_debug", "/proc/keys", "/proc/key-users",
)  # fmt: skip


def write_etc(folder: Path, uid: int, gid: int) -> None:
    """A minimal ``/etc``: no shadow, no host names, no credentials, no configuration
    of any service; only what programs need to start and name their user."""
    folder.mkdir(mode=0o755, exist_ok=True)
    (folder / "passwd").write_text(
        f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"sandbox:x:{uid}:{gid}:bundle:{INSIDE / 'tmp'}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (folder / "group").write_text(f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n")
    (folder / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    (folder / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files\n")
    (folder / EMPTY).write_bytes(b"")
    for name in ETC_COPIED:
        source = Path("/etc") / name
        if source.is_file():
            shutil.copyfile(source, folder / name, follow_symlinks=True)
    alternatives = Path("/etc/alternatives")
    if alternatives.is_dir():  # links only (e.g. awk -> /usr/bin/mawk)
        (folder / "alternatives").mkdir(exist_ok=True)
        for entry in os.scandir(alternatives):
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), folder / "alternatives" / entry.name)
    for path in folder.iterdir():
        if not path.is_symlink():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)


def top_links() -> list[str]:
    """``--symlink`` arguments for the host's top-level links into ``/usr``; a real
    folder there (not merged ``/usr``) is bound read-only instead."""
    args: list[str] = []
    for name in TOP_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


def bwrap_args(
    *,
    uid: int,
    gid: int,
    etc: Path,
    read_only: Sequence[tuple[Path, Path]],
    writable: Sequence[tuple[Path, Path]],
    env: dict[str, str],
    argv: Sequence[str],
    tmpfs_bytes: int,
    devices: Sequence[str] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The argument list of one stage (passed to bwrap through ``--args FD``);
    ``seccomp_fd`` reads ``sandbox_seccomp.program()``."""
    args = [
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--hostname", "sandbox",
        "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
        "--ro-bind", "/usr", "/usr", *top_links(),
        "--ro-bind", str(etc), "/etc",
        "--proc", "/proc", "--dev", "/dev",
    ]  # fmt: skip
    for path in MASKED_PROC:  # host facts a bundle does not need: an empty file in their place
        if os.path.exists(path):
            args += ["--ro-bind", str(etc / EMPTY), path]
    for folder in USR_CONFIG:  # configuration of /usr/local software (an npmrc, a pip.conf): not a bundle's
        if Path(folder).is_dir() and not Path(folder).is_symlink():
            args += ["--perms", "0755", "--size", str(1024**2), "--tmpfs", folder]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    for device in devices:  # e.g. /dev/nvidia0 for a CUDA stage
        args += ["--dev-bind", device, device]
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        args += ["--perms", "1777", "--size", str(tmpfs_bytes), "--tmpfs", folder]
    args += ["--perms", "0755", "--size", str(1024**2), "--tmpfs", "/run"]
    args += ["--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", str(INSIDE)]
    args += ["--perms", "0755", "--dir", str(INSIDE / "work")]
    for host, inside in runtime().binds:
        args += ["--ro-bind", host, inside]
    for host, inside in read_only:
        args += ["--ro-bind", str(host), str(inside)]
    for host, inside in writable:
        args += ["--bind", str(host), str(inside)]
    args += ["--remount-ro", "/", "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += ["--chdir", str(INSIDE), "--", SETPRIV, f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    args += ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
    return [*args, "/usr/bin/env", "-C", str(INSIDE / "tmp"), "--", *argv]  # cwd: the job's tmp, as its uid


def nvidia_devices() -> list[str]:
    """The CUDA device nodes a ``device=cuda`` stage is given (none on a CPU host)."""
    return sorted(str(p) for p in Path("/dev").glob("nvidia*") if not p.is_dir())
