"""Keystrokes per event in the workspace, from a cold start (issue 17).

Run: ``.venv/bin/python bench/keyboard.py``.

Runs the scripted scenario of ``tests/browser/keyboard_scenario.py`` in headless Chromium
(through its test, ``tests/browser/test_keyboard_flow.py``, which also checks that every
event was stored as meant): 10 action events at real frame numbers drawn across the whole
25,692-frame GTEA video (the published labels, 5 runs of 2 consecutive events), then 3
tennis break points and 3 moment intervals, keys only. Every key counts (a typed character
is one key), seeking keys included; each event is typed with the fewest keys the page
allows (typed or relative frames, "34I" typed as a keyboard types it: the Shift keydown,
the I, the Shift keyup, counted as one key, keys 30-50 ms apart (tests/browser/real_keys.py);
the shortest type-ahead text: a name's start or its
words' starts, ranked by this ledger's use as the page ranks them; Enter alone for a verb
that repeats the event before, where the empty box names it; a select's or one-digit box's
key without Tab, where only one value starts with it). Prints the keys per
event and the min / median / max per family; with ``FRAMELEDGER_KEYBOARD_KEYS=1`` the
scenario also prints each action event's keys. Goal (issue 24): actions median <= 12 and
max <= 15, tennis <= 40 per break point.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "keys.json"
        env = {**os.environ, "FRAMELEDGER_KEYBOARD_FIGURES": str(figures)}
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/browser/test_keyboard_flow.py",
        ]
        if os.environ.get("FRAMELEDGER_KEYBOARD_KEYS"):
            command.append("-s")  # the scenario's lines of keys
        result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        for line in result.stdout.splitlines():
            if line.startswith("keys "):
                print(line)
        if result.returncode != 0 or not figures.exists():
            print(result.stdout[-4000:], result.stderr[-2000:])
            print("the scenario failed: no figures")
            return 1
        rows = json.loads(figures.read_text())
    print(f"{'family':<8} {'event':<10} keys")
    for family, event, keys in rows:
        print(f"{family:<8} {event:<10} {keys}")
    print()
    for family in ("actions", "tennis", "moments"):
        keys = [n for f, _, n in rows if f == family]
        print(f"{family:<8} events {len(keys)}  median {statistics.median(keys)}  max {max(keys)}  min {min(keys)}")
    load = os.getloadavg()
    print(f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; keystroke counts do not depend on load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
