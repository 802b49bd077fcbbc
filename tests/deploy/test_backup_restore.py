"""Backup-and-restore drill: back up a running installation's database and media with
``python -m deploy.backup``, lose both, restore them, and ``manage.py verify_integrity``
passes with the audit chain head recorded at backup time; the edits and the media are back."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.deploy.stack import ROOT, recreate_database, run_stack

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

PY = str(ROOT / ".venv/bin/python")


def run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_backup_then_restore_passes_the_integrity_check(tmp_path):
    with run_stack(tmp_path, web_workers=1) as stack:
        base = stack.base
        annotator = stack.session("annotator_a")
        packet_id = annotator.get(f"{base}/api/packets/").json()[0]["id"]
        etag = annotator.get(f"{base}/api/packets/{packet_id}/ledger/").headers["ETag"]
        for k in range(3):
            event = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10 * k, "end_frame": 10 * k + 5}}
            saved = annotator.post(f"{base}/api/packets/{packet_id}/ledger/events/", json=event,
                                   headers={"If-Match": etag})  # fmt: skip
            assert saved.status_code == 201, saved.text
            etag = saved.headers["ETag"]
        env = stack.env
    # stopped: a consistent backup
    backup = run(env, "-m", "deploy.backup", "backup", str(tmp_path / "backup"))
    assert backup.returncode == 0, backup.stderr
    head = backup.stdout.split("audit chain head ")[1].strip()
    media = Path(env["FRAMELEDGER_MEDIA_ROOT"])
    media_before = {str(p.relative_to(media)): p.read_bytes() for p in media.rglob("*") if p.is_file()}
    anchors = Path(env["FRAMELEDGER_VAR_DIR"]) / "anchors" / "audit-anchors.log"
    kept = anchors.read_bytes()
    assert any(name.endswith(".mp4") for name in media_before)

    # the disaster: database and media gone
    recreate_database(env["DATABASE_URL"])
    shutil.rmtree(media)

    restored = run(env, "-m", "deploy.backup", "restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    check = run(env, "manage.py", "verify_integrity", "--expect-head", head)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "all verified" in check.stdout
    media_after = {str(p.relative_to(media)): p.read_bytes() for p in media.rglob("*") if p.is_file()}
    # The audit chain's anchor log lives outside the media and survived; it is append-only:
    # the clean check after the restore added its own signed line, and nothing else changed.
    grown = anchors.read_bytes()
    assert grown.startswith(kept) and grown != kept
    assert all(b" verify_integrity key=" in line for line in grown[len(kept) :].splitlines())
    assert (tmp_path / "backup" / "audit-anchors.log").read_bytes() == kept
    assert "audit-anchors.log" not in media_after
    assert media_after == media_before
    count = run(env, "manage.py", "shell", "-c",
                "from annotator.models import LedgerEvent; print(LedgerEvent.objects.count())")  # fmt: skip
    assert count.stdout.strip().splitlines()[-1] == "3", count.stdout + count.stderr
