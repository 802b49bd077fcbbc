"""The import graph of ``annotator/`` (or another package of the repository: ``scoring``),
read from the source with ``ast`` (imports inside functions count too: a deferred import
is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "annotator"


def modules(package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package but migrations."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT).with_suffix("")
        if "migrations" in relative.parts:
            continue
        parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
        found[".".join(parts)] = path
    return found


def _imported_names(name: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def graph(package: str = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports (``from annotator import access`` is
    ``annotator.reads.access``; importing a package itself is left out)."""
    known = modules(package)
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for imported in _imported_names(name, path):
            while imported and imported not in known:
                imported = imported.rpartition(".")[0]
            if imported and imported not in {name, package}:
                targets.add(imported)
        edges[name] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
