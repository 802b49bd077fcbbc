"""Each closed list of the break-point ledger has one source, ``scoring/tennis_vocabulary.py``:
no other module of the application or the scoring library, and no browser file, spells
it out again (a list, tuple, set or dict of three or more of its values). Data
migrations are frozen history and keep their own copy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from scoring import tennis_vocabulary

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "scoring" / "tennis_vocabulary.py"
# Three values of one list together are a copy of it; fewer are a program's own choices
# (``"saved" if … else "converted"``).
AT_LEAST = 3
VOCABULARIES = {
    name: set(values)
    for name, values in vars(tennis_vocabulary).items()
    if name.isupper() and isinstance(values, tuple) and len(values) >= AT_LEAST
}


def _copied(values: set) -> list[str]:
    return [name for name, vocabulary in VOCABULARIES.items() if len(values & vocabulary) >= AT_LEAST]


def _python_files() -> list[Path]:
    return [
        path
        for folder in ("annotator", "scoring")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "migrations" not in path.parts and path != SOURCE
    ]


def _python_copies(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = node.values
        else:
            continue
        values = {item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)}
        found += [f"line {node.lineno}: {name}" for name in _copied(values)]
    return found


def _browser_copies(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = []
    for bracket in re.finditer(r"\[[^\[\]]*\]", text):
        values = set(re.findall(r"""["'`]([^"'`\n]+)["'`]""", bracket.group()))
        line = text.count("\n", 0, bracket.start()) + 1
        found += [f"line {line}: {name}" for name in _copied(values)]
    return found


def test_the_vocabulary_module_holds_the_published_lists():
    assert {"STROKES", "SERVE_DIRECTIONS", "RALLY_DIRECTIONS", "RESULTS", "ERRORS", "POINTS"} <= set(VOCABULARIES)
    assert len(tennis_vocabulary.STROKES) == 19 and tennis_vocabulary.STROKES[0] == tennis_vocabulary.SERVE
    assert set(tennis_vocabulary.CLEAN_RESULTS) | set(tennis_vocabulary.ERROR_RESULTS) == set(tennis_vocabulary.RESULTS)
    assert set(tennis_vocabulary.SERVE_RESULTS) <= set(tennis_vocabulary.CLEAN_RESULTS)


def test_no_python_module_spells_out_a_tennis_vocabulary_again():
    files = _python_files()
    assert len(files) > 50
    found = {str(path.relative_to(ROOT)): copies for path in files if (copies := _python_copies(path))}
    assert found == {}


def test_no_browser_file_spells_out_a_tennis_vocabulary():
    files = sorted((ROOT / "frontend/static/frontend/js").rglob("*.js")) + sorted(
        (ROOT / "frontend/templates").rglob("*.html")
    )
    assert len(files) > 20
    found = {str(path.relative_to(ROOT)): copies for path in files if (copies := _browser_copies(path))}
    assert found == {}


def test_the_copy_finders_see_a_copy(tmp_path):
    """The finders themselves: a spelled-out list is found, in Python and in a script."""
    module = tmp_path / "copy.py"
    module.write_text('ENDINGS = {"f": "winner", "g": "ace", "h": "unreturnable"}\n', encoding="utf-8")
    script = tmp_path / "copy.js"
    script.write_text('const x = 1;\nconst clean = ["winner", "ace", "unreturnable"];\n', encoding="utf-8")
    assert _python_copies(module) == ["line 1: RESULTS", "line 1: CLEAN_RESULTS"]
    assert _browser_copies(script) == ["line 2: RESULTS", "line 2: CLEAN_RESULTS"]
