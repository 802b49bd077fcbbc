"""Shared by the sandbox tests: when they run (root; bwrap, required under CI=true),
small bundles, and the uid range's processes."""

from __future__ import annotations

import io
import os
import time
import zipfile

import pytest

from annotator.base.grading import sandbox, sandbox_host


def skip_reason() -> str:
    if os.geteuid() != 0:
        return "needs root: the sandbox gives each job a uid of its own (CI runs as root)"
    if not os.access("/usr/bin/bwrap", os.X_OK) and os.environ.get("CI") != "true":
        return "needs /usr/bin/bwrap (Debian's bubblewrap; bin/test installs it when root)"
    return ""


needs_sandbox = pytest.mark.skipif(bool(skip_reason()), reason=skip_reason() or "runs")

LEGAL_BUILD = 'while [ $# -gt 0 ]; do [ "$1" = --index-dir ] && index=$2; shift; done\necho ok > "$index/manifest"\n'
ROWS_RUN = (
    'while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; [ "$1" = --queries ] && q=$2; shift; done\n'
    'sed \'s/.*"query_id": "\\([^"]*\\)".*/{"query_id": "\\1", "start": 0.0, "end": 2.0}/\' "$q" > "$out"\n'
)


def bundle(build: str = LEGAL_BUILD, run: str = ROWS_RUN, **extra: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("build.sh", "#!/bin/sh\n" + build)
        archive.writestr("run.sh", "#!/bin/sh\n" + run)
        for name, text in extra.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def range_processes(uids: range = sandbox.DEFAULT_UIDS) -> list[int]:
    """Processes of any uid of the range (none once every job has ended)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/status") as handle:
                    line = next(x for x in handle if x.startswith("Uid:"))
            except (OSError, StopIteration):
                continue
            if any(int(u) in uids for u in line.split()[1:]):
                found.append(int(entry.name))
    return found


def settle(uid: int, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := sandbox_host.processes_of(uid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
