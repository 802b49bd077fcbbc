"""``python -m scoring score`` loads only the scorer it runs; every public name of
``scoring`` stays importable (lazy names resolve on first use)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import scoring
from tests.scoring.paths import EGO_GT, EGO_ORACLE, REPO_ROOT, TENNIS_GT

SCORER_MODULES = {"scoring.egocentric", "scoring.tennis", "scoring.moments"}
NEVER_ON_THE_SCORE_PATH = {
    "scoring.agreement",
    "scoring.align",
    "scoring.anchors",
    "scoring._result_dataclasses",
    "statistics",
    "random",
    "argparse",
    "dataclasses",
    "inspect",
    "fractions",
    "decimal",
    "threading",
    "pathlib",
    "typing",
}


def imported_modules(*args: str) -> set[str]:
    """Modules a real ``python -m scoring ...`` imports (from ``-X importtime``)."""
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "scoring", *args],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    names = set()
    for line in completed.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def moment_files(folder: Path) -> list[str]:
    (folder / "records.jsonl").write_text(json.dumps({"video_id": "v", "duration": 10, "grid": {"step": 2}}) + "\n")
    truth = {"queries": [{"query_id": "q", "video_id": "v", "source": "s", "intervals": [[2, 6]]}]}
    (folder / "gt.json").write_text(json.dumps(truth))
    (folder / "rows.jsonl").write_text(json.dumps({"query_id": "q", "start": 2, "end": 6}) + "\n")
    return ["--ground-truth", str(folder / "gt.json"), "--solution", str(folder / "rows.jsonl")]


@pytest.mark.parametrize(
    ("scorer", "module"),
    [
        ("egocentric-f1-v2", "scoring.egocentric"),
        ("hierarchical-bottleneck-v1", "scoring.tennis"),
        ("moment-utility-v1", "scoring.moments"),
    ],
)
def test_the_score_command_loads_only_its_scorer(tmp_path: Path, scorer: str, module: str):
    out = ["--reward-json", str(tmp_path / "r.json"), "--reward-txt", str(tmp_path / "r.txt")]
    if scorer.startswith("egocentric"):
        inputs = ["--ground-truth", str(EGO_GT), "--solution", str(EGO_ORACLE), "--frame-count", "25692"]
    elif scorer.startswith("hierarchical"):
        inputs = ["--ground-truth", str(TENNIS_GT), "--solution", str(TENNIS_GT)]
    else:
        inputs = moment_files(tmp_path) + ["--corpus", str(tmp_path / "records.jsonl")]
    names = imported_modules("score", "--scorer", scorer, *inputs, *out)
    assert (tmp_path / "r.txt").read_text() == "1.0\n"
    assert module in names
    assert not (SCORER_MODULES - {module}) & names
    assert not NEVER_ON_THE_SCORE_PATH & names


def test_a_usage_error_still_gets_argparse_messages(tmp_path: Path):
    completed = subprocess.run(
        [sys.executable, "-m", "scoring", "score", "--scorer", "egocentric-f1-v2", "--solution"],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert "usage: python -m scoring score" in completed.stderr


def test_every_public_name_is_importable_and_lazy_names_resolve():
    for name in scoring.__all__:
        assert getattr(scoring, name) is not None, name
    from scoring import Anchor, UnionItem, agreement, anchors

    assert callable(agreement) and callable(anchors)
    assert Anchor.__name__ == "Anchor" and UnionItem.__name__ == "UnionItem"
    with pytest.raises(AttributeError):
        scoring.no_such_name  # noqa: B018


def test_function_names_shadowing_submodules_stay_functions():
    """``scoring.agreement`` / ``scoring.anchors`` name functions even when their
    submodules are imported first by another path (as they always did)."""
    code = (
        "import scoring.agreement, scoring.anchors\n"
        "from scoring.agreement import distribution\n"
        "from scoring import agreement, anchors\n"
        "import types\n"
        "assert callable(agreement) and not isinstance(agreement, types.ModuleType)\n"
        "assert callable(anchors) and not isinstance(anchors, types.ModuleType)\n"
        "assert callable(distribution)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env={"PYTHONPATH": str(REPO_ROOT)}, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
