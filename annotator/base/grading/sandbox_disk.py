"""A filesystem of fixed size for each bundle job, without Django: a sparse image file
formatted ext4 (``mkfs.ext4``, Debian's ``e2fsprogs``) with a fixed inode count, loop-mounted
by the worker (root) for the job's writable folders, and gone when the job ends.

The kernel holds the limits: a write past the job's bytes, or a file past its entries,
fails with ``ENOSPC`` (``No space left on device``), whatever made it (``write``,
``fallocate``, io_uring, a file with no name held only by a descriptor in flight in a
socket message, a tree deeper than ``PATH_MAX``). Nothing is counted, nothing polls.
Ending the job is constant time: its processes are dead (the caller kills them first),
the filesystem is unmounted (lazily when something still holds it: the kernel detaches it
at once and frees it with its last reference) and its image removed; no tree is walked.

Mount options: ``nodev,nosuid`` always; ``noexec`` for CPU stages. A CUDA stage keeps exec:
PyTorch's and Triton's kernel caches (``$HOME/.triton``, ``$XDG_CACHE_HOME/torch``) are
shared objects written there and then loaded (``mmap`` with ``PROT_EXEC``, which ``noexec``
refuses). The contract needs no exec there otherwise: ``build.sh`` and ``run.sh`` live in
``/job/app``, and the in-sandbox ``/tmp`` (a tmpfs charged to the stage's memory cgroup)
allows exec for what a bundle compiles at run time.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


def _tool(name: str) -> str:
    """A system program by its absolute path (merged ``/usr`` or not), never from ``PATH``."""
    for folder in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        if os.access(f"{folder}/{name}", os.X_OK):
            return f"{folder}/{name}"
    return f"/usr/sbin/{name}"


MKFS = _tool("mkfs.ext4")  # Debian's e2fsprogs
MOUNT, UMOUNT = _tool("mount"), _tool("umount")  # Debian's mount (util-linux)
LOOP_CONTROL = "/dev/loop-control"
INODE_BYTES = 256
OWN_INODES = 32  # ext4's reserved inodes (11), the root, the job's folders, the reserve's
# The folders of the job's filesystem, as (name, inside the sandbox).
FOLDERS = ("index", "out", "tmp", "cache")


class DiskRefused(RuntimeError):
    """The worker cannot make the job's filesystem here: the job is not run."""


@dataclass(frozen=True)
class JobDisk:
    image: Path
    mount: Path
    options: str
    image_bytes: int
    free_bytes: int  # what files may hold, as the filesystem reports it when empty
    free_entries: int

    def as_dict(self) -> dict:
        return {
            "filesystem": "ext4 on a loop device, the job's own",
            "options": self.options,
            "image_bytes": self.image_bytes,
            "free_bytes": self.free_bytes,
            "free_entries": self.free_entries,
        }


def missing() -> str:
    """Why no job filesystem can be made on this machine ('' when the tools are there)."""
    if not os.access(MKFS, os.X_OK):
        return "mkfs.ext4 (Debian package e2fsprogs) is not installed"
    if not (os.access(MOUNT, os.X_OK) and os.access(UMOUNT, os.X_OK)):
        return "mount/umount (Debian package mount) is not installed"
    if not os.path.exists(LOOP_CONTROL):
        return f"{LOOP_CONTROL} is absent: no loop devices (a container needs them and CAP_SYS_ADMIN)"
    return ""


def image_bytes(data_bytes: int, entries: int) -> int:
    """The image's size: what files may hold, plus its inode tables and ext4's metadata
    (bitmaps, group descriptors: about 1/1024 of the data), so that files can reach
    ``data_bytes`` (a little more, never less)."""
    return data_bytes + entries * INODE_BYTES + data_bytes // 1024 + 4 * 1024**2


def _run(argv: list[str]) -> str:
    """'' when the command worked, else its message (never a traceback)."""
    try:
        found = subprocess.run(argv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    if found.returncode == 0:
        return ""
    return (found.stderr or found.stdout).decode(errors="replace").strip()[:300] or f"exit {found.returncode}"


def make(
    root: Path,
    *,
    data_bytes: int,
    entries: int,
    uid: int,
    gid: int,
    executable: bool,
    spares: int = 0,
    image_dir: Path | None = None,
) -> JobDisk:
    """Make, format and mount the job's filesystem under ``root`` (the job's folder, root's,
    0700): ``root/disk.img`` mounted at ``root/rw``, holding the job's folders (its uid's,
    0700), and ``spares`` empty ``out`` folders for :func:`renew`. Raises
    :class:`DiskRefused` with the reason when it cannot."""
    own = OWN_INODES + spares
    reason = missing()
    if reason:
        raise DiskRefused(f"no filesystem of its own for the job: {reason}")
    # beside the job's folder (``image_dir``; its layout is a tmpfs), named after it: jobs may share a parent
    image = Path(image_dir) / f"{Path(root).name}.img" if image_dir else Path(root) / "disk.img"
    mount = Path(root) / "rw"
    size = image_bytes(data_bytes, entries + own)
    free = os.statvfs(image.parent)
    if free.f_bavail * free.f_frsize < size:
        raise DiskRefused(
            f"no filesystem of its own for the job: the sandbox folder's filesystem has "
            f"{free.f_bavail * free.f_frsize} bytes free, the job's image needs {size}"
        )
    options = "nodev,nosuid" + ("" if executable else ",noexec")
    descriptor = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.ftruncate(descriptor, size)  # sparse: blocks are taken as the job writes
    finally:
        os.close(descriptor)
    mount.mkdir(mode=0o700)
    failure = _run(
        [MKFS, "-q", "-F", "-N", str(entries + own), "-I", str(INODE_BYTES), "-m", "0", "-b", "4096",
         "-O", "^has_journal,^resize_inode", "-E", "lazy_itable_init=1,nodiscard,root_owner=0:0", str(image)]
    )  # fmt: skip
    if not failure:
        # noinit_itable: no kernel thread zeroes the inode tables of a sparse image (it reads zeros)
        failure = _run([MOUNT, "-t", "ext4", "-o", f"loop,{options},noatime,noinit_itable", str(image), str(mount)])
    if failure:
        release(image, mount)
        failure = failure.replace(os.fspath(image), "disk.img").replace(os.fspath(mount), "rw")
        raise DiskRefused(f"no filesystem of its own for the job: {failure}")
    try:
        os.chmod(mount, 0o700)
        with contextlib.suppress(OSError):
            (mount / "lost+found").rmdir()
        for name in FOLDERS:
            (mount / name).mkdir(mode=0o700)
            os.chown(mount / name, uid, gid)
        for folder in (".reserved", ".reserved/spent", ".reserved/spares"):
            (mount / folder).mkdir(mode=0o700)
        for number in range(spares):
            (mount / ".reserved" / "spares" / f"out-{number}").mkdir(mode=0o700)
            os.chown(mount / ".reserved" / "spares" / f"out-{number}", uid, gid)
        _reserve(mount, data_bytes, entries)
        info = os.statvfs(mount)
    except OSError as error:
        release(image, mount)
        raise DiskRefused(f"no filesystem of its own for the job: {error.strerror}") from None
    return JobDisk(image, mount, options, size, info.f_bavail * info.f_frsize, info.f_favail)


def _reserve(mount: Path, data_bytes: int, entries: int) -> None:
    """Take what ext4's rounding gave past the quota (a part of a block group, a group's
    inodes) in root's own folder, out of the job's sight: what the job may use is then the
    quota, to the block and to the entry. ``fallocate`` only marks the blocks: the sparse
    image grows by nothing."""
    folder = mount / ".reserved"
    info = os.statvfs(mount)
    extra = info.f_bavail * info.f_frsize - data_bytes
    if extra >= info.f_frsize:
        descriptor = os.open(folder / "blocks", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.posix_fallocate(descriptor, 0, extra - extra % info.f_frsize)
        finally:
            os.close(descriptor)
    for number in range(max(os.statvfs(mount).f_favail - entries, 0)):
        os.close(os.open(folder / str(number), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))


def renew(mount: Path, name: str) -> None:
    """Give the job an empty ``name`` folder: the one it has is renamed aside into root's
    own folder (one rename, however much it holds; its bytes still count against the quota)
    and a spare made with the filesystem takes its place (so this needs no block and no
    inode the job may have used up)."""
    spares = sorted((mount / ".reserved" / "spares").glob(f"{name}-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    if not spares:
        raise OSError(f"no spare {name} folder left on the job's filesystem")
    spent = mount / ".reserved" / "spent"
    os.rename(mount / name, spent / spares[0].name)
    os.rename(spares[0], mount / name)


LOG_STREAMS = ("stdout", "stderr")


def mount_logs(point: Path, size: int) -> None:
    """At ``point`` (made, root's), one tmpfs of ``size`` bytes per stream (``stdout/``,
    ``stderr/``; root's, 0755: the job may write the files the worker makes in them, never
    make, rename or remove one) for the stages' log files: the kernel bounds what a stage's
    output takes, apart from the job's own filesystem and from the other stream (a flood of
    stdout leaves room for the message on stderr that says so). Raises :class:`DiskRefused`."""
    point.mkdir(mode=0o755)
    for stream in LOG_STREAMS:
        (point / stream).mkdir(mode=0o755)
        failure = _tmpfs(point / stream, f"frameledger-{stream}", f"size={size},nr_inodes=16,mode=0755", exec_=False)
        if failure:
            release_logs(point)
            raise DiskRefused(f"no log filesystem for the job: {failure.replace(os.fspath(point), 'logs')}")


MS_NOSUID, MS_NODEV, MS_NOEXEC, MNT_DETACH = 2, 4, 8, 2


def _tmpfs(point: Path, name: str, options: str, *, exec_: bool) -> str:
    """Mount a tmpfs with mount(2) itself (no ``mount`` process: a job's start stays short);
    '' when it worked, else the reason."""
    libc = ctypes.CDLL(None, use_errno=True)
    flags = MS_NOSUID | MS_NODEV | (0 if exec_ else MS_NOEXEC)
    if libc.mount(name.encode(), os.fsencode(point), b"tmpfs", flags, options.encode()) == 0:
        return ""
    return os.strerror(ctypes.get_errno())


def _untmpfs(point: Path) -> bool:
    """Unmount ``point`` with umount2(2): plainly, else lazily; whether it is gone."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.umount2(os.fsencode(point), 0) == 0 or libc.umount2(os.fsencode(point), MNT_DETACH) == 0


def mount_layout(point: Path, size: int) -> None:
    """A tmpfs of ``size`` bytes at ``point`` (root's, 0700) for the job's own layout (the
    bundle, the corpus, ``etc``): what the stage binds from it is named in its
    ``/proc/self/mountinfo`` by its path in this filesystem (``/app``), not by a host path
    (``/srv/sandbox/bundle-17-x1/job/app``). Raises :class:`DiskRefused`."""
    failure = _tmpfs(point, "frameledger-job", f"size={size},mode=0700", exec_=True)
    if failure:
        raise DiskRefused(f"no filesystem for the job's layout: {failure.replace(os.fspath(point), 'job')}")


def release_logs(point: Path) -> list[str]:
    """Unmount the log filesystems and remove their mount points; never raises, returns what stayed."""
    left = [f"{p}: still mounted" for p in _mounted(point) if not _untmpfs(Path(p))]
    for folder in [*(point / stream for stream in LOG_STREAMS), point]:
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError as error:
            left.append(f"logs: {error.strerror}")
    return left


def _mounted(folder: Path) -> list[str]:
    """The mount points at or under ``folder``, deepest first (``/proc/self/mountinfo``)."""
    prefix = os.fspath(folder)
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", "rb") as handle:
        for line in handle:
            point = line.split()[4].decode(errors="surrogateescape")
            point = point.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
            if point == prefix or point.startswith(prefix.rstrip("/") + "/"):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def unmount_under(folder: Path) -> list[str]:
    """Unmount every filesystem at or under ``folder``: plainly, else lazily (detached at
    once, freed with its last reference). Returns what stayed mounted, as the mount table
    says: ``umount`` can unmount and still fail afterwards (in a podman container, whose
    ``/sys/dev/block`` is masked, it exits 32 with "filesystem was unmounted, but any
    subsequent operation failed: No such device or address" once the loop device it
    looks up there has been cleared by the kernel), and a mount that is gone is not left."""
    left = []
    for point in _mounted(Path(folder)):
        if _run([UMOUNT, point]) and point in _mounted(Path(point)) and _run([UMOUNT, "-l", point]):
            left.append(point)
    return [point for point in left if point in _mounted(Path(point))]


def release(image: Path, mount: Path) -> list[str]:
    """Unmount the job's filesystem and remove its image: no walk of what the job wrote.
    The caller has killed every process of the job. Never raises; returns what stayed."""
    left = [f"{point}: still mounted" for point in unmount_under(mount)]
    for path, remove in ((image, os.unlink), (mount, os.rmdir)):
        try:
            remove(path)
        except FileNotFoundError:
            pass
        except OSError as error:
            left.append(f"{path.name}: {error.strerror}")
    return left
