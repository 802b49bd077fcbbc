"""Every test module under ``tests/browser`` carries the ``browser`` mark: the PostgreSQL
pass and ``bin/test --quick`` leave browser tests out by that mark alone, so an unmarked
module would run there without its server and browser setup being meant for it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BROWSER_TESTS = sorted((Path(__file__).resolve().parents[1] / "browser").glob("test_*.py"))


def _module_marks(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return ast.unparse(node.value)
    return ""


def test_there_are_browser_test_modules():
    assert len(BROWSER_TESTS) > 20


@pytest.mark.parametrize("path", BROWSER_TESTS, ids=lambda p: p.name)
def test_each_browser_module_is_marked_browser(path: Path):
    assert "pytest.mark.browser" in _module_marks(path), f"{path.name}: pytestmark lacks pytest.mark.browser"
