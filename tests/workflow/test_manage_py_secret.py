"""Issue 14: ``manage.py <anything>`` without ``DJANGO_SECRET_KEY`` uses the local secret
``bin/run-demo`` creates, or ends with one line saying what to do (never a traceback)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update({"FRAMELEDGER_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "deploy.settings"})
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_without_a_secret_anywhere_manage_py_says_so_in_one_line(tmp_path):
    answer = run_manage(tmp_path, "check")
    assert answer.returncode != 0
    assert "Traceback" not in answer.stderr
    lines = answer.stderr.strip().splitlines()
    assert len(lines) == 1, answer.stderr
    assert "DJANGO_SECRET_KEY" in lines[0] and "bin/run-demo" in lines[0]


def test_manage_py_uses_the_secret_file_run_demo_creates(tmp_path):
    key = secrets.token_urlsafe(50)
    (tmp_path / "secret_key").write_text(key + "\n")
    answer = run_manage(tmp_path, "shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)")
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip().splitlines()[-1] == key


def test_run_demo_writes_the_secret_where_manage_py_looks():
    script = (ROOT / "bin" / "run-demo").read_text()
    assert "var/secret_key" in script and 'DJANGO_SECRET_KEY_FILE="$PWD/var/secret_key"' in script
