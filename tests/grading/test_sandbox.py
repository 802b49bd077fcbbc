"""Hostile executable bundles in the sandbox (``annotator.base.grading.sandbox``), without
Django: each test says what stopped the bundle. They need root (the CI machine runs as
root) and bwrap; elsewhere they are skipped with the reason."""

from __future__ import annotations

import io
import json
import os
import socket
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest

from annotator.base.grading import sandbox, sandbox_host
from tests.grading.sandbox_helpers import LEGAL_BUILD, ROWS_RUN, bundle, needs_sandbox, settle

pytestmark = needs_sandbox

RECORD = {"video_id": "v1", "duration": 60.0, "grid": {"step": 2.0}}
REQUESTS = [{"query_id": f"q{k}", "video_id": "v1", "description": f"thing {k}"} for k in range(5)]


@pytest.fixture
def jobs():
    """A job parent folder and a uid leased for the test, where the workers lease theirs."""
    parent = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    with sandbox_host.uid_lease(sandbox.DEFAULT_UIDS, sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))) as uid:
        yield parent, uid
    sandbox.cleanup(parent)


def run(jobs, data: bytes, *, requests_per_call: int = 3, **limits):
    parent, uid = jobs
    job, calls = sandbox.prepare(
        parent / "job", data, [RECORD], {}, REQUESTS, requests_per_call=requests_per_call, uid=uid
    )
    settings = {"build_seconds": 20, "call_seconds": 20, "requests_per_call": requests_per_call, **limits}
    stages, rows = sandbox.run_bundle(job, calls, sandbox.Limits(**settings), row_cap=10_000_000)
    return job, stages, rows


def test_a_well_behaved_bundle_is_built_and_called_in_calls_of_at_most_the_limit(jobs):
    job, stages, rows = run(jobs, bundle())
    assert [s.name for s in stages] == ["build", "call-1", "call-2"]
    assert [s.requests for s in stages[1:]] == [3, 2] and all(s.outcome == "ok" for s in stages)
    assert [json.loads(line)["query_id"] for line in rows.splitlines()] == [r["query_id"] for r in REQUESTS]
    assert not job.rw.exists() and job.disk["free_entries"] >= 200_000  # its filesystem, gone with it
    assert all(s.enforced["cgroups"] for s in stages) or not sandbox.probe().cgroups


def test_a_fork_bomb_hits_the_process_limit_and_dies_with_its_pid_namespace(jobs):
    bomb = "bomb() { bomb | bomb & }\nbomb\nsleep 100\n"
    _, stages, rows = run(jobs, bundle(build=bomb), build_seconds=8, processes=40)
    build = stages[0]
    # RLIMIT_NPROC of the job's own uid (and the stage's pids cgroup): the script's own
    # ``sleep`` cannot fork, so it fails; the bomb's processes die with the pid namespace.
    assert b"Cannot fork" in build.stderr
    assert build.outcome in {"failed", "timeout"} and len(stages) == 1 and rows == b""
    assert build.seconds < 15
    assert settle(jobs[1]) == []


def test_writes_outside_its_folders_are_refused(jobs):
    outside = jobs[0] / "outside.txt"
    targets = ["$0.extra", "$(dirname $0)/new-file", "$corpus/records.jsonl", "$(dirname $index)/sibling", str(outside)]
    script = (
        'while [ $# -gt 0 ]; do [ "$1" = --index-dir ] && index=$2; [ "$1" = --corpus ] && corpus=$2; shift; done\n'
        + "".join(f'if echo x >> "{t}" 2>/dev/null; then echo "WROTE"; else echo "denied {t}"; fi\n' for t in targets)
        + 'echo ok > "$index/manifest"\n'
    )
    write_index = ROWS_RUN + 'index=$(dirname $(dirname "$q"))/../work/index\n'
    write_index += 'echo x > "$index/manifest"\ncat "$index/manifest"\n'
    job, stages, rows = run(jobs, bundle(build=script, run=write_index))
    assert stages[0].outcome == "ok", stages[0].stderr
    assert b"WROTE" not in stages[0].stdout and stages[0].stdout.count(b"denied") == len(targets)
    assert not outside.exists() and not (job.root / "work" / "sibling").exists()
    assert json.loads(job.root.joinpath("task/data/corpus/records.jsonl").read_text())["video_id"] == "v1"
    assert all(s.stdout == b"ok\n" for s in stages[1:])  # the call could not rewrite the index
    assert all(b"Read-only file system" in s.stderr for s in stages[1:])  # the index is bound read-only


def test_files_outside_the_job_do_not_exist_inside_even_when_world_readable(jobs):
    parent = jobs[0]
    vault = parent / "vault"
    vault.mkdir(mode=0o700)
    (vault / "gt.json").write_text('{"queries": [{"query_id": "q0", "intervals": [[47.5, 85.5]]}]}')
    public = Path(tempfile.mkdtemp(prefix="published-answers-"))
    try:
        public.chmod(0o755)
        (public / "highlight_val_release.jsonl").write_text('{"qid": 1, "relevant_windows": [[12, 20]]}\n')
        (public / "highlight_val_release.jsonl").chmod(0o644)
        thief = (
            "".join(
                f"cat {p} || echo 'missing {p}'\n"
                for p in (vault / "gt.json", public / "highlight_val_release.jsonl", Path.cwd() / "README.md")
            )
            + f"ls {public} {parent} || true\n"
            + LEGAL_BUILD
        )
        _, stages, _ = run(jobs, bundle(build=thief))
    finally:
        sandbox.cleanup(public)
    build = stages[0]
    assert build.outcome == "ok", build.stderr
    assert b"47.5" not in build.stdout and b"relevant_windows" not in build.stdout
    assert b"FrameLedger" not in build.stdout  # the checkout's README
    assert build.stdout.count(b"missing ") == 3 and build.stderr.count(b"No such file or directory") >= 5


def test_a_call_that_sleeps_forever_is_killed_and_its_complete_rows_count(jobs):
    sleeper = (
        'while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done\n'
        "setsid sleep 1000 &\n"
        'printf \'{"query_id": "q0", "start": 0, "end": 2}\\n\' > "$out"\n'
        'printf \'{"query_id": "q1", "start": 0, "end": 2}\\n{"query_\' >> "$out"\n'
        "sleep 1000\n"
    )
    _, stages, rows = run(jobs, bundle(run=sleeper), call_seconds=3, requests_per_call=250)
    call = stages[1]
    assert call.timed_out and call.outcome == "timeout" and 3 <= call.seconds < 10
    assert call.rows == 2 and [json.loads(line)["query_id"] for line in rows.splitlines()] == ["q0", "q1"]
    assert settle(jobs[1]) == []  # the escaped ``setsid sleep`` died with the namespace


def test_printing_a_gigabyte_keeps_the_log_cap_and_a_huge_file_meets_the_size_limit(jobs):
    loud = "head -c 1073741824 /dev/zero | tr '\\0' x\n" + LEGAL_BUILD
    big = 'while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done\nhead -c 50000000 /dev/zero > "$out"\n'
    _, stages, _ = run(jobs, bundle(build=loud, run=big), log_bytes=4096, file_bytes=1_000_000, build_seconds=120)
    build = stages[0]
    assert build.outcome == "ok" and len(build.stdout) == 4096 and build.stdout == b"x" * 4096
    # the stage's stdout is a file: the kernel stopped it at RLIMIT_FSIZE (SIGXFSZ for ``tr``)
    assert build.dropped_bytes == 1_000_000 - 4096
    call = stages[1]
    assert call.outcome == "failed" and call.rows == 0  # SIGXFSZ: a non-timeout failure invalidates the call
    assert b"File size limit exceeded" in call.stderr or call.signal == "SIGXFSZ" or call.exit_code != 0


def test_a_network_connection_to_the_host_is_unreachable(jobs):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    probe = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3)'\n" + LEGAL_BUILD
    try:
        _, stages, _ = run(jobs, bundle(build=probe))
        # the stage's own network namespace: its loopback has no listener of the host's
        assert b"Connection refused" in stages[0].stderr or b"Network is unreachable" in stages[0].stderr
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_an_output_linked_to_a_root_only_file_is_not_read(jobs):
    private = jobs[0] / "root-only.txt"
    private.write_text('{"query_id": "q0", "start": 0, "end": 2}\n')
    os.chmod(private, 0o600)
    linker = f'while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done\nln -s {private} "$out"\n'
    _, stages, rows = run(jobs, bundle(run=linker), requests_per_call=250)
    assert stages[1].outcome == "ok" and rows == b"" and stages[1].rows == 0
    assert "not a plain file" in stages[1].note or "could not be opened" in stages[1].note


def test_a_bundle_without_run_sh_or_with_an_escaping_path_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("build.sh", "#!/bin/sh\n")
    with pytest.raises(sandbox.BundleError, match="no run.sh"):
        sandbox.extract(buffer.getvalue(), tmp_path / "a")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("build.sh", "")
        archive.writestr("run.sh", "")
        archive.writestr("../evil.sh", "")
    with pytest.raises(sandbox.BundleError, match="unsafe path"):
        sandbox.extract(buffer.getvalue(), tmp_path / "b")
    with pytest.raises(sandbox.BundleError, match="not a zip"):
        sandbox.extract(b"not a zip", tmp_path / "c")


KEYS = "python3 - <<'PY'\n{}\nPY\n"
KEYCTL_SYSCALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}  # add_key, request_key, keyctl


@pytest.mark.skipif(os.uname().machine not in KEYCTL_SYSCALLS, reason="keyring syscall numbers of x86_64/aarch64")
def test_a_key_left_in_the_uids_kernel_keyring_does_not_reach_a_later_job_of_that_uid(jobs):
    # The kernel keeps a uid's user keyring after its processes end: a job that could add
    # to it would leave data for the next job leased the same uid (nothing of a job may outlive it).
    add, request, keyctl = KEYCTL_SYSCALLS[os.uname().machine]
    head = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
    put = KEYS.format(
        head + f"k = libc.syscall({add}, b'user', b'left-behind', b'an earlier job', 14, ctypes.c_long(-4))\n"
        "print('add_key', k, ctypes.get_errno())"
    )
    get = KEYS.format(
        head + f"k = libc.syscall({request}, b'user', b'left-behind', None, ctypes.c_long(-4))\n"
        "print('request_key', k)\nif k > 0:\n    buf = ctypes.create_string_buffer(64)\n"
        f"    n = libc.syscall({keyctl}, 11, ctypes.c_long(k), buf, 64)\n    print('READ', buf.raw[:n])\n"
        f"    libc.syscall({keyctl}, 21, ctypes.c_long(k))"
    )
    parent, uid = jobs
    for name, script in (("first", put), ("second", get)):
        job, calls = sandbox.prepare(parent / name, bundle(build=script + LEGAL_BUILD), [RECORD], {}, REQUESTS,
                                     requests_per_call=3, uid=uid)  # fmt: skip
        stages, _ = sandbox.run_bundle(job, calls, sandbox.Limits(build_seconds=20, call_seconds=20), row_cap=1000)
        assert stages[0].outcome == "ok", stages[0].stderr
        if name == "first":
            assert stages[0].stdout.startswith(b"add_key -1 "), stages[0].stdout  # refused inside
    assert b"READ" not in stages[0].stdout and b"request_key -1" in stages[0].stdout, stages[0].stdout
    assert "keyrings" in sandbox.probe().as_dict(uid)["seccomp"]  # the run record says so


def test_a_bundle_cannot_make_a_user_namespace_of_its_own(jobs):
    nest = "unshare -Ur id -u 2>&1; unshare -U true 2>&1 || echo 'no user namespace'\n" + LEGAL_BUILD
    _, stages, _ = run(jobs, bundle(build=nest))
    assert stages[0].outcome == "ok", stages[0].stderr
    assert b"no user namespace" in stages[0].stdout and b"\n0\n" not in b"\n" + stages[0].stdout


@pytest.mark.skipif(not Path("/usr/local/etc").is_dir(), reason="the host has no /usr/local/etc")
def test_the_hosts_configuration_under_usr_local_etc_is_not_inside(jobs):
    # /usr is bound whole, but /usr/local/etc is host configuration (it may name registry tokens)
    names = sorted(os.listdir("/usr/local/etc"))
    look = "ls -A /usr/local/etc | sed 's/^/INSIDE /'; echo listed\n" + LEGAL_BUILD
    _, stages, _ = run(jobs, bundle(build=look))
    assert stages[0].outcome == "ok" and b"listed" in stages[0].stdout, stages[0].stderr
    assert b"INSIDE" not in stages[0].stdout, (names, stages[0].stdout)


BUSY = "python3 -c 'import time\nend = time.time() + 3\nwhile time.time() < end: pass\nprint(time.process_time())'"


@pytest.mark.skipif("cpu" not in sandbox_host.cgroup_support(), reason="no cpu cgroup controller on this host")
def test_a_job_of_many_busy_processes_gets_one_stages_cpu_share_not_more(jobs):
    # Six busy processes beside one, each side in its own stage at once. Each of the six in
    # a session of its own (setsid: the kernel's autogroups share the CPUs between sessions)
    # would take 6/7 of the CPUs; with a CPU share per stage they get about half.
    many = (
        f"for i in 1 2 3 4 5 6; do setsid {BUSY} > $TMPDIR/cpu-$i & done; wait\n"
        "while [ $(cat $TMPDIR/cpu-* | wc -l) -lt 6 ]; do sleep 0.1; done; cat $TMPDIR/cpu-* | sed 's/^/A /'\n"
    )
    one = f"{BUSY} | sed 's/^/B /'\n"
    parent, uid = jobs
    found: dict[str, bytes] = {}
    with sandbox_host.uid_lease(sandbox.DEFAULT_UIDS, sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))) as other:

        def stage(name: str, script: str, job_uid: int) -> None:
            job, calls = sandbox.prepare(parent / name, bundle(build=script + LEGAL_BUILD), [RECORD], {}, REQUESTS,
                                         requests_per_call=3, uid=job_uid)  # fmt: skip
            stages, _ = sandbox.run_bundle(job, calls, sandbox.Limits(build_seconds=30, call_seconds=20), row_cap=1000)
            assert stages[0].outcome == "ok", stages[0].stderr
            assert "cpu" in stages[0].enforced["cgroups"], stages[0].enforced
            found[name] = stages[0].stdout

        threads = [threading.Thread(target=stage, args=a) for a in (("many", many, uid), ("one", one, other))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    many_cpu = sum(float(line.split()[1]) for line in found["many"].splitlines() if line.startswith(b"A "))
    one_cpu = sum(float(line.split()[1]) for line in found["one"].splitlines() if line.startswith(b"B "))
    assert many_cpu > 0 and one_cpu / many_cpu > 0.5, (one_cpu, many_cpu)
