"""Each job's writable folders are a filesystem of its own, of fixed size and inode count
(``annotator.base.grading.sandbox_disk``): the kernel answers ``ENOSPC`` at the quota, however
the bytes are held, and the job's end unmounts and deletes it without walking it. Each test is
a bundle that beat the polled disk count (issue 34), run in the real sandbox (root, bwrap)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from annotator.base.grading import sandbox, sandbox_host
from tests.grading.sandbox_helpers import LEGAL_BUILD, bundle, needs_sandbox, settle

pytestmark = needs_sandbox

RECORD = {"video_id": "v1", "duration": 60.0, "grid": {"step": 2.0}}
REQUESTS = [{"query_id": f"q{k}", "video_id": "v1", "description": f"thing {k}"} for k in range(3)]
MiB = 1024**2
PY = "python3 - <<'PY'\n{}\nPY\n"


@pytest.fixture
def jobs():
    parent = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    with sandbox_host.uid_lease(sandbox.DEFAULT_UIDS, sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))) as uid:
        yield parent, uid
    assert sandbox.cleanup(parent) == []


def run(jobs, build: str, *, device: str = "cpu", **limits):
    parent, uid = jobs
    data = bundle(build=build)
    job, calls = sandbox.prepare(parent / "job", data, [RECORD], {}, REQUESTS, requests_per_call=3, uid=uid)
    settings = {"build_seconds": 60, "call_seconds": 20, **limits}
    stages, _ = sandbox.run_bundle(job, calls, sandbox.Limits(**settings), row_cap=10_000, device=device)
    return job, stages[0]


def figures(build: sandbox.StageResult) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in build.stdout.decode().splitlines() if " " in line)


def gone(job: sandbox.Job) -> None:
    """The job's filesystem and its log filesystems are unmounted and its image deleted; none of its
    processes lives (the tmpfs of the job's layout goes with ``sandbox.cleanup``)."""
    assert not job.rw.exists() and not job.logs.exists() and not (job.root.parent / "job.img").exists()
    mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    assert not [line for line in mounts if str(job.rw) in line or str(job.logs) in line]
    assert settle(job.uid) == []


def test_nameless_files_parked_in_socket_messages_meet_enospc_at_the_quota(jobs):
    # O_TMPFILE: no name; its descriptor is then sent in an SCM_RIGHTS message that nobody
    # receives, and closed: no process holds it, no folder names it. 25 of 8 MiB each.
    park = PY.format(
        "import errno, os, socket\n"
        "a, b = socket.socketpair()\nwritten = 0\n"
        "try:\n"
        "    for _ in range(25):\n"
        "        fd = os.open(os.environ['TMPDIR'], os.O_TMPFILE | os.O_WRONLY, 0o600)\n"
        "        for _ in range(8):\n"
        "            written += os.write(fd, b'x' * (1 << 20))\n"
        "        socket.send_fds(a, [b'f'], [fd])\n"
        "        os.close(fd)\n"
        "    print('stopped never')\n"
        "except OSError as e:\n"
        "    print('stopped', errno.errorcode[e.errno])\n"
        "print('written', written)"
    )
    job, build = run(jobs, park + LEGAL_BUILD, disk_bytes=32 * MiB)
    found = figures(build)
    assert found["stopped"] == "ENOSPC", build.stdout
    assert 24 * MiB <= int(found["written"]) <= 33 * MiB, found
    assert build.outcome == "ok" and build.killed == ""  # the kernel refused the writes; nothing was killed
    gone(job)


def test_fallocate_past_the_quota_is_enospc_and_reserves_nothing(jobs):
    grab = (
        "for i in 1 2 3; do fallocate -l 1G $TMPDIR/grab-$i 2>&1 || echo refused; done\n"
        "du -sk $TMPDIR | cut -f1 | sed 's/^/KIB /'\nrm $TMPDIR/grab-*\n"
        "fallocate -l 8M $TMPDIR/small && echo small-ok\n" + LEGAL_BUILD
    )
    job, build = run(jobs, grab, disk_bytes=64 * MiB)
    assert build.outcome == "ok", (build.outcome, build.stderr)
    assert build.stdout.count(b"refused") == 3 and b"No space left on device" in build.stdout, build.stdout
    assert int(figures(build)["KIB"]) <= 64 * 1024 + 16, build.stdout  # the first took what was left, no more
    assert b"small-ok" in build.stdout  # within the quota, fallocate works as anywhere
    gone(job)


def test_a_tree_deeper_than_path_max_meets_the_byte_and_entry_caps_and_leaves_nothing(jobs):
    # 17 nested folders of 250-character names (4,267 characters: past PATH_MAX), reached with
    # relative opens only; then bytes, then empty files, each until the kernel says no.
    deep = PY.format(
        "import errno, os\n"
        "fd = os.open(os.environ['TMPDIR'], os.O_RDONLY | os.O_DIRECTORY)\n"
        "for _ in range(17):\n"
        "    os.mkdir('d' * 250, dir_fd=fd)\n"
        "    inner = os.open('d' * 250, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)\n"
        "    os.close(fd)\n    fd = inner\n"
        "written = files = 0\n"
        "try:\n"
        "    out = os.open('big', os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)\n"
        "    while written < 200 << 20:\n"
        "        written += os.write(out, b'x' * (1 << 20))\n"
        "except OSError as e:\n"
        "    print('bytes', errno.errorcode[e.errno])\n"
        "try:\n"
        "    for i in range(5000):\n"
        "        os.close(os.open(f'f{i}', os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))\n"
        "        files += 1\n"
        "except OSError as e:\n"
        "    print('entries', errno.errorcode[e.errno])\n"
        "print('written', written)\nprint('files', files)"
    )
    job, build = run(jobs, deep + LEGAL_BUILD, disk_bytes=32 * MiB, disk_entries=1000)
    found = figures(build)
    assert found.get("bytes") == "ENOSPC" and found.get("entries") == "ENOSPC", build.stdout + build.stderr
    assert int(found["written"]) <= 33 * MiB and 900 <= int(found["files"]) <= 1100, found
    gone(job)


def test_the_jobs_filesystem_is_noexec_for_a_cpu_stage_and_exec_for_a_cuda_one(jobs):
    copy = "cp /usr/bin/true $TMPDIR/t && $TMPDIR/t && echo RAN || echo refused\n" + LEGAL_BUILD
    job, build = run(jobs, copy)
    assert b"refused" in build.stdout and b"Permission denied" in build.stderr, build.stdout + build.stderr
    assert "noexec" in job.disk["options"] and "nodev" in job.disk["options"] and "nosuid" in job.disk["options"]
    (jobs[0] / "cuda").mkdir()
    cuda, build = run((jobs[0] / "cuda", jobs[1]), copy, device="cuda")
    assert b"RAN" in build.stdout and "noexec" not in cuda.disk["options"], build.stdout + build.stderr


def test_a_job_whose_filesystem_cannot_be_made_is_refused_with_the_reason_and_never_runs(jobs):
    free = os.statvfs(jobs[0])
    too_big = free.f_bavail * free.f_frsize * 2
    with pytest.raises(sandbox.SandboxRefused, match="bytes free") as refused:
        run(jobs, "touch /job/out/ran\n" + LEGAL_BUILD, disk_bytes=too_big)
    assert str(jobs[0]) not in str(refused.value)  # no host path in the reason
    assert not (jobs[0] / "job" / "rw").exists() and not (jobs[0] / "job.img").exists()
