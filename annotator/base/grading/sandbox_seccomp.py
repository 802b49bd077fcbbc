"""The seccomp filter of every bundle stage (``bwrap --seccomp FD``), without Django: classic
BPF over ``struct seccomp_data``, built here for x86_64 and aarch64.

It refuses at least what the default profiles of Docker and Podman refuse to a container
without added capabilities (moby's ``profiles/seccomp/default.json``, containers/common's
``seccomp.json``), each with ``EPERM`` unless said otherwise; ``docs/grading.md`` lists every
difference from those profiles and why:

* **kernel attack surface no bundle needs**: io_uring (``io_uring_setup``/``enter``/
  ``register``: its operations bypass this filter, e.g. ``IORING_OP_FALLOCATE``),
  ``userfaultfd``, ``perf_event_open``, ``bpf``, ``fanotify_init``;
* **state that outlives the job**: the kernel keyrings (``add_key``, ``request_key``,
  ``keyctl``: a uid's user keyring outlives its processes);
* **namespaces**: ``setns``; ``unshare`` and ``clone`` with any ``CLONE_NEW*`` flag;
  ``clone3`` answers ``ENOSYS`` (its flags are in memory, out of a filter's reach) so that
  libc falls back to ``clone``;
* **other processes**: ``ptrace`` ``PTRACE_ATTACH``/``PTRACE_SEIZE`` (a process may still be
  traced by its parent after ``PTRACE_TRACEME``: debuggers of their own children work),
  ``process_vm_readv``/``writev``, ``kcmp``, ``pidfd_getfd``;
* **the machine** (refused anyway without capabilities; here before any kernel code runs):
  mounts (``mount``, ``umount2``, ``pivot_root``, the new mount API), modules, ``kexec``,
  ``reboot``, swap, ``acct``, quotas, clocks, ``iopl``/``ioperm``, ``syslog``, ``vhangup``,
  file handles (``name_to_handle_at``, ``open_by_handle_at``), NUMA policy (``mbind``,
  ``set_mempolicy``, ``get_mempolicy``, ``move_pages``, ``migrate_pages``) and the obsolete
  calls (``uselib``, ``ustat``, ``sysfs``, ``_sysctl``, ``nfsservctl``, the module queries);
* ``personality`` other than the values Docker allows (Linux, ``UNAME26``, ``PER_LINUX32``,
  the query).

One addition of its own: **inotify** (``inotify_init``, ``inotify_init1``, ``inotify_add_watch``)
answers ``ENOSYS``: a watch on the shared read-only runtime would tell a job when another job
opens it (a channel between jobs); programs fall back to polling as on a kernel without it.

Any other ABI (i386 or x32 on x86_64, arm32 on aarch64) is killed: its numbers would slip past
the filter. ``fallocate`` is allowed: the job's filesystem has a fixed size (``sandbox_disk``).
"""

from __future__ import annotations

import os
import struct

# Classic BPF over ``struct seccomp_data`` (nr at 0, arch at 4, args from 16).
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _KILL_PROCESS, _ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_EPERM, _ENOSYS = 1, 38
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also NEWTIME (0x80,
# which in clone's flags is part of the exit signal).
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
CLONE_NEWTIME = 0x80
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)  # Docker's: PER_LINUX, PER_LINUX32, UNAME26, query

ARCH = {"x86_64": (0xC000003E, 0x40000000), "aarch64": (0xC00000B7, 0)}  # audit arch, x32 bit
# name: (x86_64, aarch64); None where the machine has no such call.
REFUSED = {
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "userfaultfd": (323, 282), "perf_event_open": (298, 241), "bpf": (321, 280), "fanotify_init": (300, 262),
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219), "setns": (308, 268),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "kcmp": (312, 272), "pidfd_getfd": (438, 438),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "move_mount": (429, 429),
    "open_tree": (428, 428), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "fspick": (433, 433), "mount_setattr": (442, 442),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "create_module": (174, None),
    "get_kernel_syms": (177, None), "query_module": (178, None), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89), "quotactl": (179, 60),
    "quotactl_fd": (443, 443), "settimeofday": (164, 170), "clock_settime": (227, 112),
    "clock_adjtime": (305, 266), "iopl": (172, None), "ioperm": (173, None), "syslog": (103, 116),
    "vhangup": (153, 58), "lookup_dcookie": (212, 18), "name_to_handle_at": (303, 264),
    "open_by_handle_at": (304, 265), "mbind": (237, 235), "set_mempolicy": (238, 237),
    "get_mempolicy": (239, 236), "move_pages": (279, 239), "migrate_pages": (256, 238),
    "uselib": (134, None), "ustat": (136, None), "sysfs": (139, None), "_sysctl": (156, None),
    "nfsservctl": (180, 42),
}  # fmt: skip
# inotify: a job could watch another job open the shared read-only runtime (a one-bit channel
# between jobs). ENOSYS, as on a kernel built without it: ``tail -f`` and file watchers fall back
# to polling without a word.
NO_INOTIFY = {"inotify_init": (253, None), "inotify_init1": (294, 26), "inotify_add_watch": (254, 27)}
CLONE, CLONE3, UNSHARE, PTRACE, PERSONALITY = (
    {"x86_64": 56, "aarch64": 220}, {"x86_64": 435, "aarch64": 435}, {"x86_64": 272, "aarch64": 97},
    {"x86_64": 101, "aarch64": 117}, {"x86_64": 135, "aarch64": 92},
)  # fmt: skip

SUMMARY = (
    "at least Docker's default profile: io_uring, userfaultfd, perf_event_open, bpf, fanotify_init, "
    "kernel keyrings, new namespaces (setns, unshare/clone with CLONE_NEW*), ptrace attach, "
    "process_vm_*, mounts, modules, clocks and the other host-wide calls refused; inotify absent (ENOSYS); "
    "other ABIs killed"
)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _flags_refused(number: int, mask: int) -> list[bytes]:
    """``number`` with any bit of ``mask`` in its first argument (low word): EPERM."""
    return [
        _op(_LD_ABS, 0), _op(_JEQ, number, 0, 4), _op(_LD_ABS, 16), _op(_JSET, mask, 0, 1),
        _op(_RET, _ERRNO | _EPERM), _op(_RET, _ALLOW),
    ]  # fmt: skip


def _values_refused(number: int, values: tuple[int, ...], *, allowed: bool) -> list[bytes]:
    """``number`` whose first argument (low word) is one of ``values``: EPERM; with
    ``allowed``, the reverse (EPERM unless it is one of them)."""
    size = len(values)
    ops = [_op(_LD_ABS, 0), _op(_JEQ, number, 0, size + 3), _op(_LD_ABS, 16)]
    ops += [_op(_JEQ, value, size - index, 0) for index, value in enumerate(values)]  # a match: the last RET
    refuse, allow = _op(_RET, _ERRNO | _EPERM), _op(_RET, _ALLOW)
    return [*ops, refuse, allow] if allowed else [*ops, allow, refuse]


def program(machine: str | None = None) -> bytes | None:
    """The filter (``struct sock_filter`` array), or None on a machine without one here
    (the run's enforcement says so)."""
    machine = machine or os.uname().machine
    if machine not in ARCH:
        return None
    arch, x32 = ARCH[machine]
    ops = [_op(_LD_ABS, 4), _op(_JEQ, arch, 1, 0), _op(_RET, _KILL_PROCESS), _op(_LD_ABS, 0)]
    if x32:
        ops += [_op(_JGE, x32, 0, 1), _op(_RET, _KILL_PROCESS)]
    column = 0 if machine == "x86_64" else 1
    for numbers in REFUSED.values():
        if numbers[column] is not None:
            ops += [_op(_JEQ, numbers[column], 0, 1), _op(_RET, _ERRNO | _EPERM)]
    ops += [_op(_JEQ, CLONE3[machine], 0, 1), _op(_RET, _ERRNO | _ENOSYS)]
    for numbers in NO_INOTIFY.values():
        if numbers[column] is not None:
            ops += [_op(_JEQ, numbers[column], 0, 1), _op(_RET, _ERRNO | _ENOSYS)]
    ops += _flags_refused(UNSHARE[machine], CLONE_NAMESPACES | CLONE_NEWTIME)
    ops += _flags_refused(CLONE[machine], CLONE_NAMESPACES)
    ops += _values_refused(PTRACE[machine], (PTRACE_ATTACH, PTRACE_SEIZE), allowed=False)
    ops += _values_refused(PERSONALITY[machine], PERSONALITIES, allowed=True)
    ops.append(_op(_RET, _ALLOW))
    return b"".join(ops)
