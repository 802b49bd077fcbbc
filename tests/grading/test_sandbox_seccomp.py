"""The stage's seccomp filter refuses at least what Docker's default profile refuses
(``annotator.base.grading.sandbox_seccomp``): one bundle calls each refused system call in
the real sandbox and reports what the kernel answered."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from annotator.base.grading import sandbox, sandbox_host
from tests.grading.sandbox_helpers import LEGAL_BUILD, bundle, needs_sandbox

pytestmark = [
    needs_sandbox,
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe's system call numbers are x86_64's"),
]

# x86_64 numbers, written out here (not read from the filter's table, so that a wrong number
# there fails here).
PROBE = r"""
import ctypes, errno, json, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(number, *args):
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    return 'ok' if result >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
buffer = ctypes.create_string_buffer(512)
address = ctypes.addressof(buffer)
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
iov = (ctypes.c_long * 2)(address, 8)
found = {
    'io_uring_setup': call(425, 8, address),
    'userfaultfd': call(323, 0),
    'perf_event_open': call(298, address, 0, -1, -1, 0),
    'bpf': call(321, 0, address, 48),
    'fanotify_init': call(300, 0, 0),
    'add_key': call(248, 0, 0, 0, 0, -4),
    'setns': call(308, 0, 0),
    'unshare_mount': call(272, 0x00020000),
    'unshare_net': call(272, 0x40000000),
    'unshare_files': call(272, 0x00000400),
    'ptrace_attach_own_child': call(101, 16, child, 0, 0),
    'ptrace_seize_own_child': call(101, 0x4206, child, 0, 0),
    'process_vm_readv_own_child': call(310, child, ctypes.addressof(iov), 1, ctypes.addressof(iov), 1, 0),
    'kcmp': call(312, os.getpid(), child, 0, 0, 0),
    'mount': call(165, 0, 0, 0, 0, 0),
    'personality_read_implies_exec': call(135, 0x0400000),
    'personality_query': call(135, 0xFFFFFFFF),
    'mbind': call(237, 0, 0, 0, 0, 0, 0),
    'clone3': call(435, 0, 0),
    'inotify_init': call(253),
    'inotify_init1': call(294, 0),
    'inotify_add_watch': call(254, 0, address, 0x20),
    'fallocate': call(285, os.open(os.environ['TMPDIR'] + '/f', os.O_CREAT | os.O_WRONLY, 0o600), 0, 0, 4096),
}
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
traced = os.fork()
if traced == 0:
    os._exit(0 if libc.ptrace(0, 0, 0, 0) == 0 else 1)  # PTRACE_TRACEME: its parent may trace it
found['ptrace_traceme'] = 'ok' if os.waitpid(traced, 0)[1] == 0 else 'refused'
print('FOUND', json.dumps(found))
"""

REFUSED = [
    "io_uring_setup", "userfaultfd", "perf_event_open", "bpf", "fanotify_init", "add_key", "setns",
    "unshare_mount", "unshare_net", "ptrace_attach_own_child", "ptrace_seize_own_child",
    "process_vm_readv_own_child", "kcmp", "mount", "personality_read_implies_exec", "mbind",
]  # fmt: skip
ALLOWED = ["unshare_files", "personality_query", "fallocate", "ptrace_traceme"]


def test_the_stage_filter_refuses_what_dockers_default_profile_refuses_and_allows_the_rest():
    parent = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    script = "python3 - <<'PY'\n" + PROBE + "PY\n" + LEGAL_BUILD
    locks = sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))
    try:
        with sandbox_host.uid_lease(sandbox.DEFAULT_UIDS, locks) as uid:
            job, calls = sandbox.prepare(parent / "job", bundle(build=script), [], {}, [], requests_per_call=1, uid=uid)
            stages, _ = sandbox.run_bundle(job, calls, sandbox.Limits(build_seconds=60), row_cap=100)
    finally:
        sandbox.cleanup(parent)
    build = stages[0]
    assert build.outcome == "ok" and b"FOUND " in build.stdout, build.stdout + build.stderr
    found = json.loads(build.stdout.split(b"FOUND ", 1)[1])
    assert {name: found[name] for name in REFUSED} == dict.fromkeys(REFUSED, "EPERM"), found
    assert {name: found[name] for name in ALLOWED} == dict.fromkeys(ALLOWED, "ok"), found
    assert found["clone3"] == "ENOSYS"  # libc falls back to clone, whose flags the filter reads
    # no watch on the shared runtime (a channel between jobs): as on a kernel without inotify
    assert [found[n] for n in ("inotify_init", "inotify_init1", "inotify_add_watch")] == ["ENOSYS"] * 3, found
    assert "io_uring" in sandbox.probe().as_dict(uid)["seccomp"]
