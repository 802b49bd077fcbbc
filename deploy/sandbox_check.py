"""Whether this machine (or container) can run a bundle in the sandbox, as the bundles worker
would: ``python -m deploy.sandbox_check`` prints one JSON object and exits 0 when a small
bundle ran sandboxed with every per-stage cgroup, 3 when the run was refused (with the reason),
1 otherwise. No Django, no database: the same calls the worker makes (``sandbox.probe``, a uid
leased from the worker's range, the job laid out in ``FRAMELEDGER_SANDBOX_DIR``, its own
filesystem, a build stage and one call).

``deploy/image.py`` runs it in the bundles service's container with the privileges the compose
file declares, and with each of them taken away (docs/deploy.md, "The bundles worker in a
container"); ``tests/deploy/test_bundles_privileges.py`` does the same for one.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from annotator.base.grading import sandbox, sandbox_host

MiB = 1024**2
BUILD = (
    '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --index-dir ] && index=$2; shift; done\necho ok > "$index/manifest"\n'
)
RUN = (
    '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; [ "$1" = --queries ] && q=$2; shift; done\n'
    'sed \'s/.*"query_id": "\\([^"]*\\)".*/{"query_id": "\\1", "start": 0.0, "end": 2.0}/\' "$q" > "$out"\n'
)


def small_bundle() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("build.sh", BUILD)
        archive.writestr("run.sh", RUN)
    return buffer.getvalue()


def check() -> tuple[int, dict]:
    enforcement = sandbox.probe()
    if not enforcement.ready:
        return 3, {"status": "refused", "reason": enforcement.reason}
    base = Path(os.environ.get("FRAMELEDGER_SANDBOX_DIR") or tempfile.gettempdir())
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    uids = sandbox_host.parse_uid_range(os.environ.get("FRAMELEDGER_SANDBOX_UIDS", "2000000-2000999"))
    limits = sandbox.Limits(disk_bytes=32 * MiB, disk_entries=1000, memory_bytes=512 * MiB)
    with sandbox_host.uid_lease(uids, sandbox_host.uid_lock_dir(base)) as uid:
        parent = Path(tempfile.mkdtemp(prefix="bundle-check-", dir=base))
        try:
            job, calls = sandbox.prepare(
                parent / "job", small_bundle(), [{"id": 1}], {}, [{"query_id": "q1"}], requests_per_call=10, uid=uid
            )
            stages, rows = sandbox.run_bundle(job, calls, limits, row_cap=MiB)
            record = sandbox.enforcement_record(job, stages)
        except (sandbox.SandboxRefused, OSError) as error:
            return 3, {"status": "refused", "reason": str(error)}
        finally:
            left = sandbox.cleanup(parent)
    outcomes = {s.name: s.outcome for s in stages}
    notes = [note for s in stages for note in s.enforced.get("notes", [])]
    done = all(o == "ok" for o in outcomes.values()) and rows.count(b"\n") == 1 and not left
    report = {
        "status": "done" if done else "failed",
        "stages": outcomes,
        "rows": rows.count(b"\n"),
        "stage_cgroups": record["stage_cgroups"],
        "cgroup_notes": notes,
        "job_disk": record.get("job_disk", {}).get("filesystem"),
        "left": left,
    }
    if not done:
        report["stderr"] = {s.name: sandbox.log_text(s.stderr)[-500:] for s in stages}
    return (0 if done else 1), report


def main() -> int:
    code, report = check()
    print(json.dumps(report))
    return code


if __name__ == "__main__":
    sys.exit(main())
