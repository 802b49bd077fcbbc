"""A bundles worker short of a privilege refuses bundle runs with the reason, never runs one
with less: what a container that is not privileged takes away, reproduced on the host with
real mount namespaces (``unshare --mount``) and capability sets (``setpriv``), each in a process
of its own (docs/deploy.md, "The bundles worker in a container";
``tests/deploy/test_bundles_privileges.py`` does the same in the image's container)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from annotator.base.grading import sandbox_host
from tests.grading.sandbox_helpers import needs_sandbox

pytestmark = needs_sandbox
ROOT = Path(__file__).resolve().parents[2]
ALL = "pids,memory,cpu"


def python(code: str, *, env: dict | None = None, wrap: list[str] = (), setup: str = "") -> dict:
    """Run ``code`` (which prints one JSON line) in a mount namespace of its own, after the shell
    commands of ``setup`` there, with the checkout on the path; its last line, parsed."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    command = [*wrap, sys.executable, "-c", textwrap.dedent(code)]
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'set -e\n{setup}\nexec "$@"', "sh", *command],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


PROBE = """
import json
from annotator.base.grading import sandbox
found = sandbox.probe()
print(json.dumps({"ready": found.ready, "reason": found.reason, "cgroups": found.cgroups}))
"""


def cgroup_mounts() -> list[str]:
    """The cgroup mounts of this host (the v1 hierarchies, or the one v2 mount)."""
    points = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if fields[2] in ("cgroup", "cgroup2"):
            points.append(fields[1])
    return points


def read_only_cgroups() -> str:
    """Shell lines that remount every cgroup mount read-only, as a container gets them."""
    return "\n".join(f"mount -o remount,bind,ro {point}" for point in cgroup_mounts())


def needs_all_cgroups() -> None:
    if set(sandbox_host.cgroup_support()) != set(ALL.split(",")):
        pytest.skip(f"this host lets a root worker use {sorted(sandbox_host.cgroup_support())}, not {ALL}")


def test_a_job_filesystem_that_umount_unmounted_but_called_failed_is_not_left_mounted(tmp_path):
    # podman masks /sys/dev/block: umount unmounts the loop-mounted image, then exits 32 ("any
    # subsequent operation failed: No such device or address") as it looks the loop device up
    # there; the job was reported "still mounted" and every bundle run in the container ended so.
    found = python(
        f"""
        import json
        from pathlib import Path
        from annotator.base.grading import sandbox_disk as disk
        root = Path({str(tmp_path / "job")!r}); root.mkdir(mode=0o700)
        made = disk.make(root, data_bytes=8 << 20, entries=100, uid=2000999, gid=2000999, executable=False)
        print(json.dumps({{"left": disk.release(made.image, made.mount), "mounted": disk._mounted(root)}}))
        """,
        setup="mount -t tmpfs -o ro tmpfs /sys/dev/block",
    )
    assert found == {"left": [], "mounted": []}


def test_a_worker_without_a_capability_refuses_bundle_runs_naming_it():
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    for cap in ("dac_override", "setpcap", "net_admin"):
        drop = ["setpriv", f"--bounding-set=-{cap}", f"--inh-caps=-{cap}", "--"]
        found = python(PROBE, wrap=drop)
        assert not found["ready"], (cap, found)
        assert f"lacks CAP_{cap.upper()} (" in found["reason"] and "refused" in found["reason"], found
    assert python(PROBE)["ready"]  # with every capability (root on a host)


def test_read_only_cgroups_refuse_runs_where_they_are_required_and_the_wrapper_makes_them_writable():
    needs_all_cgroups()
    refused = python(PROBE, env={sandbox_host.REQUIRED_ENV: ALL}, setup=read_only_cgroups())
    assert not refused["ready"], refused
    assert "is mounted read-only" in refused["reason"] and f"{sandbox_host.REQUIRED_ENV} requires" in refused["reason"]
    # not required: the run goes on without them, as before (the record says which it had)
    assert python(PROBE, env={sandbox_host.REQUIRED_ENV: ""}, setup=read_only_cgroups())["ready"]
    # deploy/bundles-worker remounts them writable before the worker starts: every stage gets its own
    wrapped = python(
        PROBE,
        env={sandbox_host.REQUIRED_ENV: ALL},
        setup=read_only_cgroups(),
        wrap=[str(ROOT / "deploy/bundles-worker")],
    )
    assert wrapped["ready"] and set(wrapped["cgroups"]) == set(ALL.split(",")), wrapped


def test_a_stage_whose_required_cgroup_cannot_be_made_is_not_run(tmp_path):
    needs_all_cgroups()
    # the probe passed, then the memory hierarchy went read-only: the build never starts
    found = python(
        f"""
        import json, os, subprocess, tempfile
        from pathlib import Path
        from annotator.base.grading import sandbox, sandbox_host
        from tests.grading.sandbox_helpers import bundle
        assert sandbox.probe().ready
        os.environ[sandbox_host.REQUIRED_ENV] = "memory"
        subprocess.run(["mount", "-o", "remount,bind,ro", os.path.realpath("/sys/fs/cgroup/memory")], check=True)
        locks = sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))  # every test's uids, one place
        with sandbox_host.uid_lease(sandbox.DEFAULT_UIDS, locks) as uid:
            job, calls = sandbox.prepare(Path({str(tmp_path / "job")!r}), bundle(), [{{}}], {{}},
                                         [{{"query_id": "q"}}], requests_per_call=1, uid=uid)
            try:
                sandbox.run_bundle(job, calls, sandbox.Limits(disk_bytes=8 << 20, disk_entries=100), row_cap=1000)
                print(json.dumps({{"refused": ""}}))
            except sandbox.SandboxRefused as error:
                print(json.dumps({{"refused": str(error), "left": sandbox.cleanup(job.root)}}))
        """
    )
    assert found["refused"].startswith("stage build: no memory cgroup of its own"), found
    assert "the stage is not run" in found["refused"] and found["left"] == [], found


def test_an_unknown_required_controller_is_an_error():
    assert sandbox_host.required_cgroups("pids, memory,pids") == ("pids", "memory")
    assert sandbox_host.required_cgroups("") == ()
    with pytest.raises(ValueError, match="names gpu: known are pids, memory, cpu"):
        sandbox_host.required_cgroups("pids,gpu")
