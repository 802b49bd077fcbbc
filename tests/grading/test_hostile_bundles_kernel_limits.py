"""The bundles that beat the polled disk count and the old seccomp filter (issue 34), through
the real path: uploaded over the API, run by real Celery workers (two, so that a
well-behaved job runs beside them), in bwrap, on the job's own filesystem. Run on SQLite
and, with ``DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

import pytest

from tests.grading.sandbox_helpers import LEGAL_BUILD, bundle, needs_sandbox
from tests.grading.test_hostile_bundles import bench, no_leftovers, out, two_workers  # noqa: F401

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MiB = 1024**2
PY = "python3 - <<'PY'\n{}\nPY\n"

PARKED = PY.format(  # nameless files whose descriptors wait in socket messages nobody reads
    "import errno, os, socket\na, b = socket.socketpair()\nwritten = 0\n"
    "try:\n    for _ in range(25):\n"
    "        fd = os.open(os.environ['TMPDIR'], os.O_TMPFILE | os.O_WRONLY, 0o600)\n"
    "        for _ in range(8):\n            written += os.write(fd, b'x' * (1 << 20))\n"
    "        socket.send_fds(a, [b'f'], [fd])\n        os.close(fd)\n"
    "except OSError as e:\n    print('stopped', errno.errorcode[e.errno])\n"
    "print('written', written)"
)
DEEP = PY.format(  # below PATH_MAX: 17 folders of 250 characters, relative opens only
    "import errno, os\nfd = os.open(os.environ['TMPDIR'], os.O_RDONLY | os.O_DIRECTORY)\n"
    "for _ in range(17):\n    os.mkdir('d' * 250, dir_fd=fd)\n"
    "    inner = os.open('d' * 250, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)\n    os.close(fd)\n    fd = inner\n"
    "written = files = 0\n"
    "try:\n    big = os.open('big', os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)\n"
    "    while written < 200 << 20:\n        written += os.write(big, b'x' * (1 << 20))\n"
    "except OSError as e:\n    print('bytes', errno.errorcode[e.errno])\n"
    "try:\n    for i in range(5000):\n"
    "        os.close(os.open(f'f{i}', os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))\n        files += 1\n"
    "except OSError as e:\n    print('entries', errno.errorcode[e.errno])\n"
    "print('written', written)\nprint('files', files)"
)
URING = PY.format(  # io_uring's IORING_OP_FALLOCATE would reserve past any filter on fallocate(2)
    "import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\nparams = ctypes.create_string_buffer(120)\n"
    "r = libc.syscall(425, 8, params)\n"
    "print('io_uring', 'ok' if r >= 0 else errno.errorcode[ctypes.get_errno()])"
)


def figures(text: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)


def test_disk_tricks_meet_the_jobs_own_filesystem_beside_a_well_behaved_job(two_workers, bench, settings):  # noqa: F811
    settings.FRAMELEDGER_BUNDLE_DISK_BYTES = 32 * MiB
    settings.FRAMELEDGER_BUNDLE_DISK_ENTRIES = 1000
    ids = {
        "parked": bench.submit(bundle(build=PARKED + LEGAL_BUILD), "parked"),
        "well-behaved": bench.submit(bundle(build="sleep 2\n" + LEGAL_BUILD), "well-behaved"),
        "deep": bench.submit(bundle(build=DEEP + LEGAL_BUILD), "deep"),
        "uring": bench.submit(bundle(build=URING + LEGAL_BUILD), "uring"),
    }
    bodies = dict(zip(ids, bench.wait(*ids.values()), strict=True))
    assert all(b["status"] == "done" for b in bodies.values()), {k: b["outcome"] for k, b in bodies.items()}
    parked = figures(out(bodies["parked"]))
    assert parked["stopped"] == "ENOSPC" and int(parked["written"]) <= 32 * MiB, parked
    deep = figures(out(bodies["deep"]))
    assert deep["bytes"] == deep["entries"] == "ENOSPC", deep
    assert int(deep["written"]) <= 32 * MiB and int(deep["files"]) <= 1000, deep
    assert figures(out(bodies["uring"]))["io_uring"] == "EPERM"
    for body in bodies.values():
        assert body["enforcement"]["job_disk"]["free_bytes"] == 32 * MiB
        assert body["enforcement"]["job_disk"]["free_entries"] == 1000
    well = bodies["well-behaved"]
    assert well["outcome"] == "ok" and well["stages"][1]["rows"] == 3, well
    for run_id in ids.values():
        no_leftovers(run_id)
