"""The ``check_*`` tier between entry points and ``do_*`` writes, read from the source with
``ast`` (as ``tests/architecture/imports.py`` reads imports).

The rule: ``check_<op>`` lives in the ``annotator/actions/`` module of ``do_<op>`` and calls
it, after validating what a user sent (sizes with one limit per operation, formats,
vocabularies, permissions that ``annotator.reads.access`` does not decide). The pages
(``annotator/entry/pages/``) never name a ``do_*``: no import of one, no ``module.do_*``.
Where a ``check_<op>`` exists, no entry point (API views, tasks, consumers, management
commands) calls ``do_<op>`` past it. An entry point may call a ``do_*`` that has no
``check_*``: a write that takes no user input (a button: freeze, build the union, publish),
or whose ``do_*`` judges its own arguments and has no page twin (the ledger events).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = ROOT / "annotator" / "actions"
PAGES = ROOT / "annotator" / "entry" / "pages"
ENTRY_POINTS = (ROOT / "annotator" / "entry", ROOT / "annotator" / "management")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _called_names(function: ast.FunctionDef) -> set[str]:
    return {
        node.func.id for node in ast.walk(function) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def _do_names(tree: ast.Module) -> set[str]:
    """Every ``do_*`` a module names: imported, called by name, or as ``module.do_*``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names if alias.name.startswith("do_"))
        elif isinstance(node, ast.Name) and node.id.startswith("do_"):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("do_"):
            found.add(node.attr)
    return found


def _checks() -> dict[str, Path]:
    """``check_<op>`` -> its actions module, for every check in the write layer."""
    return {
        name: path
        for path in sorted(ACTIONS.glob("*.py"))
        for name in _functions(_tree(path))
        if name.startswith("check_")
    }


def test_every_check_calls_the_do_of_its_operation_in_its_own_module():
    checks = _checks()
    assert len(checks) >= 11  # the imports, the task kind, people and projects
    missing = {}
    for name, path in checks.items():
        functions = _functions(_tree(path))
        do = "do_" + name.removeprefix("check_")
        if do not in functions:
            missing[name] = f"no {do} in {path.relative_to(ROOT)}"
        elif do not in _called_names(functions[name]):
            missing[name] = f"does not call {do}"
    assert missing == {}


def test_no_page_module_names_a_do_function():
    pages = sorted(PAGES.rglob("*.py"))
    assert len(pages) >= 6
    found = {str(path.relative_to(ROOT)): sorted(names) for path in pages if (names := _do_names(_tree(path)))}
    assert found == {}


def test_no_entry_point_calls_a_do_past_its_check():
    guarded = {"do_" + name.removeprefix("check_") for name in _checks()}
    found = {}
    for folder in ENTRY_POINTS:
        for path in sorted(folder.rglob("*.py")):
            names = _do_names(_tree(path)) & guarded
            if names:
                found[str(path.relative_to(ROOT))] = sorted(names)
    assert found == {}


def test_the_reading_sees_both_import_and_attribute_forms():
    """The reader itself: an import of a ``do_*`` and a ``module.do_*`` are both found."""
    tree = ast.parse(
        "from annotator.actions.people import do_set_roles\nfrom x import people\npeople.do_set_active()\n"
    )
    assert _do_names(tree) == {"do_set_roles", "do_set_active"}
    check = ast.parse("def check_x():\n    return do_x()\n").body[0]
    assert _called_names(check) == {"do_x"}
