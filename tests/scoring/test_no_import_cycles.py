"""No group of ``scoring/`` modules imports itself in a circle, deferred imports included
(read from the source with ``ast``, as the import-direction test of ``annotator/``)."""

from __future__ import annotations

from tests.architecture.imports import cycles, graph

EDGES = graph("scoring")


def test_the_graph_sees_the_scoring_modules():
    assert {"scoring.registry", "scoring.diagnostics", "scoring.agreement", "scoring.differences"} <= set(EDGES)
    # deferred imports count: the registry loads a scorer's module on first use
    deferred = {"scoring.egocentric", "scoring.tennis", "scoring.moments", "scoring.diagnostics"}
    assert deferred <= EDGES["scoring.registry"]
    assert "scoring.tennis" in EDGES["scoring.agreement"]  # ``from . import tennis``


def test_no_import_cycles_inside_scoring():
    assert cycles(EDGES) == []


def test_the_scorer_families_never_import_the_registry():
    """The registry sits above the scorers, diagnostics and the distribution helper:
    they never look a scorer up (that made registry -> diagnostics -> registry)."""
    below = ("egocentric", "tennis", "moments", "align", "diagnostics", "differences", "matching", "jsonio")
    assert [name for name in below if "scoring.registry" in EDGES[f"scoring.{name}"]] == []
