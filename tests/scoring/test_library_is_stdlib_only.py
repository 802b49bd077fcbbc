"""The scoring package imports only the standard library and itself, never asserts,
and prints nothing outside the command line."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "scoring"
MODULES = sorted(PACKAGE.glob("*.py"))
COMMAND_LINE = {"cli.py", "__main__.py"}


def imported_roots(tree: ast.AST) -> list[str]:
    roots = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots.append((node.module or "").split(".")[0])
    return roots


def test_the_package_has_modules_to_check():
    assert {"__init__.py", "egocentric.py", "tennis.py", "moments.py", "cli.py"} <= {m.name for m in MODULES}


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.name)
def test_every_module_imports_only_the_standard_library_or_the_package(module: Path):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    outside = [root for root in imported_roots(tree) if root not in sys.stdlib_module_names and root != "scoring"]
    assert outside == []


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.name)
def test_no_module_validates_with_assert(module: Path):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    assert not [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]


@pytest.mark.parametrize("module", [m for m in MODULES if m.name not in COMMAND_LINE], ids=lambda path: path.name)
def test_library_modules_never_print(module: Path):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    calls = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"print", "input"}
    ]
    assert calls == []


def test_the_import_check_catches_a_third_party_import():
    assert imported_roots(ast.parse("import numpy\nfrom django.db import models\nfrom . import x")) == [
        "numpy",
        "django",
    ]
