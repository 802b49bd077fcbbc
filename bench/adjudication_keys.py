"""Adjudicating the demo's union: keystrokes and seconds to decide every item (issue 17).

Run: ``.venv/bin/python bench/adjudication_keys.py [--before main]``.

Runs ``tests/browser/adjudication_scenario.py`` in headless Chromium (the published GTEA
labels of the demo video as ledger A, a seeded second annotator as ledger B, the real union)
and prints the items by tier, the keys pressed and the seconds from the first key to the
last decision painted (the page's and the server's time only: no time spent watching).
``--before REV`` runs the same on the code of REV first (``git archive``, as
``bench/ui_scale.py`` does), under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ui_scale import REPO_ROOT, export  # noqa: E402

SCENARIO = "tests/browser/adjudication_scenario.py"


def run(root: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        env = {**os.environ, "FRAMELEDGER_ADJUDICATION_FIGURES": str(out)}
        command = [str(REPO_ROOT / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", SCENARIO]
        result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if result.returncode != 0 or not out.exists():
            print(result.stdout[-6000:], result.stderr[-2000:])
            raise SystemExit(f"the scenario failed in {root}")
        return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="also measure this git revision (e.g. main)")
    args = parser.parse_args()
    columns = []
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            root = export(args.before, Path(tmp), extra=[SCENARIO, "tests/browser/keyboard_scenario.py"])
            columns.append((f"before ({args.before})", run(root)))
    columns.append(("after (this tree)", run(REPO_ROOT)))
    for name, figures in columns:
        print(f"{name}:")
        needed = figures["needing_a_decision"]
        print(f"  union items {figures['items']}, agreed {figures['agreed']}, needing a decision {needed}")
        print(f"  by tier: {figures['by_tier']}")
        print(f"  keys {figures['keys']} ({figures['keys'] / max(1, figures['needing_a_decision']):.1f} per item)")
        print(f"  seconds {figures['seconds']} (first key to last decision painted)")
        print(f"  page says: {figures['progress']}")
    load = os.getloadavg()
    print(f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs; headless Chromium)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
