"""Migrations are self-contained: they never import live application code, so editing a
module never silently changes what a fresh database gets."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from annotator.base import builtin_kinds

MIGRATIONS = sorted((Path(__file__).resolve().parents[2] / "annotator" / "migrations").glob("0*.py"))


def test_there_are_migrations_to_check():
    assert any(path.name.startswith("0002") for path in MIGRATIONS)


@pytest.mark.parametrize("path", MIGRATIONS, ids=lambda path: path.name)
def test_no_migration_imports_application_code(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    project = [
        name for name in imported if name and name.split(".")[0] in {"annotator", "scoring", "retrieval", "frontend"}
    ]
    assert project == []


def test_the_seed_kinds_snapshot_matches_the_module_a_change_needs_a_new_data_migration():
    migration = importlib.import_module("annotator.migrations.0002_builtin_task_kinds")
    assert migration.BUILTIN_KINDS == builtin_kinds.BUILTIN_KINDS
