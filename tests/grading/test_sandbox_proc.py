"""Host facts in the stage's ``/proc`` that no bundle needs read as empty files inside
(``sandbox_root.MASKED_PROC``): the kernel's command line and configuration, its symbols,
the host's boot id."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from annotator.base.grading import sandbox, sandbox_host
from annotator.base.grading.sandbox_root import MASKED_PROC
from tests.grading.sandbox_helpers import LEGAL_BUILD, bundle, needs_sandbox

pytestmark = needs_sandbox


def test_host_facts_in_proc_read_as_empty_files_inside():
    present = [path for path in MASKED_PROC if os.path.exists(path)]
    assert Path("/proc/cmdline").read_bytes().strip(), "the host's command line is what is hidden"
    look = "".join(f'printf "%s " {path}; wc -c < {path}\n' for path in present) + LEGAL_BUILD
    parent = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    locks = sandbox_host.uid_lock_dir(Path(tempfile.gettempdir()))
    try:
        with sandbox_host.uid_lease(sandbox.DEFAULT_UIDS, locks) as uid:
            job, calls = sandbox.prepare(parent / "job", bundle(build=look), [], {}, [], requests_per_call=1, uid=uid)
            stages, _ = sandbox.run_bundle(job, calls, sandbox.Limits(build_seconds=30), row_cap=100)
    finally:
        sandbox.cleanup(parent)
    build = stages[0]
    assert build.outcome == "ok", build.stderr
    sizes = dict(line.split() for line in build.stdout.decode().splitlines())
    assert sizes == dict.fromkeys(present, "0"), (sizes, build.stderr)
