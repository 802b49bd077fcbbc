"""Browser bench at the seeds' size (issue 17): 2,000 events per ledger, a ~2,000-item union.

Run: ``.venv/bin/python bench/ui_scale.py [--events 2000] [--before REV]``.

Runs ``tests/browser/ui_scale_scenario.py`` in headless Chromium (pytest for the live
server, database and browser) and prints: workspace and adjudication pages usable (ms from
navigation to ready), the longest task while loading, key-to-paint for a boundary nudge
(keydown to the first frame painted after it), decision-to-paint (Ctrl+Enter to the item's
row painted as decided, the POST included), and the longest task while scrolling the table
and zooming the timeline. Goals: nudge <= 50 ms, decision <= 100 ms, usable <= 1 s, no long
task over 100 ms while scrolling or zooming.

``--before REV`` also runs the same scenario on the code of REV (e.g. ``main``), exported
with ``git archive`` into a temporary folder, and prints both side by side, measured one
after the other under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "tests/browser/ui_scale_scenario.py"


def run(root: Path, events: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        env = {**os.environ, "FRAMELEDGER_UI_SCALE_FIGURES": str(out), "FRAMELEDGER_UI_SCALE_EVENTS": str(events)}
        command = [str(REPO_ROOT / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", SCENARIO]
        result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if result.returncode != 0 or not out.exists():
            print(result.stdout[-6000:], result.stderr[-2000:])
            raise SystemExit(f"the scenario failed in {root}")
        return json.loads(out.read_text())


def export(rev: str, dest: Path, extra: list[str] = (SCENARIO,)) -> Path:
    """The code of ``rev`` in ``dest``, with this tree's scenario files and virtualenv."""
    archive = subprocess.run(["git", "archive", rev], cwd=REPO_ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    for path in extra:
        shutil.copy(REPO_ROOT / path, dest / path)
    (dest / ".venv").symlink_to((REPO_ROOT / ".venv").resolve())
    return dest


def cell(value) -> str:
    if isinstance(value, dict):
        return f"{value['median']:.1f} / {value['max']:.1f}"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


ROWS = [
    ("events per ledger", "events"),
    ("union items", "union_items"),
    ("workspace usable (ms)", "workspace_usable_ms"),
    ("workspace longest task at load (ms)", "workspace_longest_load_task_ms"),
    ("nudge key-to-paint median / max (ms)", "nudge_key_to_paint_ms"),
    ("workspace longest task scroll+zoom (ms)", "workspace_longest_task_scroll_zoom_ms"),
    ("adjudication usable (ms)", "adjudication_usable_ms"),
    ("adjudication longest task at load (ms)", "adjudication_longest_load_task_ms"),
    ("decision-to-paint median / max (ms)", "decision_to_paint_ms"),
    ("  of which the POST median / max (ms)", "decision_request_ms"),
    ("adjudication longest task scroll+zoom (ms)", "adjudication_longest_task_scroll_zoom_ms"),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--before", help="also measure this git revision (e.g. main)")
    args = parser.parse_args()
    columns = []
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            columns.append((f"before ({args.before})", run(export(args.before, Path(tmp)), args.events)))
    columns.append(("after (this tree)", run(REPO_ROOT, args.events)))
    print(f"{'':<44}" + "".join(f"{name:>22}" for name, _ in columns))
    for label, key in ROWS:
        print(f"{label:<44}" + "".join(f"{cell(figures.get(key, '-')):>22}" for _, figures in columns))
    load = os.getloadavg()
    print(f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs; headless Chromium)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
