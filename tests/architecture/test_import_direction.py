"""The import direction inside ``annotator/`` (README, "Inside annotator/"): a module may
import modules of its own layer or a lower one, never a higher one, and no group of
modules imports itself in a circle. Read from the source with ``ast``, like the stdlib
test of ``scoring/``."""

from __future__ import annotations

import pytest

from tests.architecture.imports import cycles, graph, modules

# Lower number = lower layer. The first matching prefix wins (most specific first).
LAYERS: list[tuple[str, int]] = [
    # 1 base: no models, no Django queries
    ("annotator.errors", 1),
    ("annotator.canonical", 1),
    ("annotator.queue", 1),
    ("annotator.filenames", 1),
    ("annotator.sockets", 1),
    ("annotator.login_guard", 1),
    ("annotator.urlconverters", 1),
    ("annotator.compression", 1),
    ("annotator.unavailable", 1),
    ("annotator.moment_sources", 1),
    ("annotator.bundles", 1),
    ("annotator.gtea", 1),
    ("annotator.charting", 1),
    ("annotator.builtin_kinds", 1),
    ("annotator.seals", 1),
    ("annotator.text_guard", 1),
    ("annotator.families", 1),
    ("annotator.grading.leaderboard", 1),
    ("annotator.grading.calibration", 1),
    ("annotator.grading.uploads", 1),
    ("annotator.media.views", 3),
    ("annotator.media", 1),
    # 2 models
    ("annotator.models", 2),
    ("annotator.taskkinds", 2),
    # 3 reads: access decisions, documents, exports, grading reads, presenters, broadcasts
    ("annotator.access", 3),
    ("annotator.documents", 3),
    ("annotator.export", 3),
    ("annotator.grading", 3),
    ("annotator.present", 3),
    ("annotator.publishing", 3),
    ("annotator.realtime", 3),
    ("annotator.integrity", 3),
    ("annotator.verify", 3),
    ("annotator.sealed_rows", 3),
    ("annotator.rescore", 3),
    ("annotator.anchors", 3),
    ("annotator.overview", 3),
    ("annotator.label_imports", 3),
    ("annotator.search", 3),
    # The audit log's appender: a read that finds tampered data records it.
    ("annotator.actions.audit", 3),
    # 4 writes
    ("annotator.actions", 4),
    # 5 entry points: REST, websockets, Celery tasks, URLs, commands, checks
    ("annotator.api", 5),
    ("annotator.tasks", 5),
    ("annotator.consumers", 5),
    ("annotator.routing", 5),
    ("annotator.media_urls", 5),
    ("annotator.management", 5),
    ("annotator.checks", 5),
    ("annotator.security_checks", 5),
    ("annotator.apps", 5),
]


def layer(module: str) -> int:
    for prefix, number in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return number
    raise LookupError(f"{module} has no layer: add it to LAYERS and to the README table")


EDGES = graph()


def test_the_graph_sees_the_package():
    assert {"annotator.actions.grading", "annotator.grading.reads", "annotator.present"} <= set(modules())
    assert "annotator.documents" in EDGES["annotator.export"]


@pytest.mark.parametrize("module", sorted(m for m in EDGES if m != "annotator"))
def test_every_module_imports_only_its_own_layer_or_lower(module: str):
    upward = sorted(target for target in EDGES[module] if layer(target) > layer(module))
    assert upward == [], f"{module} (layer {layer(module)}) imports a higher layer"


def test_no_import_cycles_inside_annotator():
    assert cycles(EDGES) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
