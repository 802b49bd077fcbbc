"""Where the reference data lives (inside the repository's data/ folder) and small
loaders shared by the scoring tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "data"
EGO = DATA / "agentic-vbench" / "egocentric-activity-understanding"
TENNIS = DATA / "agentic-vbench" / "medvedev-de-minaur-2023-us-open-break-point-ledger"
EGO_GT = EGO / "steps" / "solve" / "tests" / "gt.json"
EGO_ORACLE = EGO / "steps" / "solve" / "solution" / "oracle.json"
TENNIS_GT = TENNIS / "calibration" / "baselines" / "anchors" / "oracle" / "solution.json"
QVH = DATA / "qvhighlights"
PUBLISHED_FRAME_COUNT = 25692


def load_json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def run_cli(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    """``python -m scoring ...`` in a fresh interpreter (the real command line)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "scoring", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def qvhighlights_task(step: float = 2) -> tuple[dict, list[dict]]:
    """QVHighlights val as a moment-utility ground truth and corpus (``step`` s grid)."""
    rows = [json.loads(line) for line in (QVH / "highlight_val_release.jsonl").open()]
    ground_truth = {
        "queries": [
            {
                "query_id": str(row["qid"]),
                "video_id": row["vid"],
                "source": "qvhighlights",
                "intervals": row["relevant_windows"],
            }
            for row in rows
        ]
    }
    durations = {row["vid"]: row["duration"] for row in rows}
    corpus = [{"video_id": vid, "duration": d, "grid": {"step": step}} for vid, d in durations.items()]
    return ground_truth, corpus


def top1_submission(name: str) -> bytes:
    """The top-ranked window of every query of a reference prediction file, as JSONL."""
    lines = []
    for line in (QVH / name).open():
        row = json.loads(line)
        start, end = row["pred_relevant_windows"][0][:2]
        lines.append(json.dumps({"query_id": str(row["qid"]), "start": start, "end": end}))
    return ("\n".join(lines) + "\n").encode()
