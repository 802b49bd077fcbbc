"""The import direction inside ``annotator/`` (README, "Inside annotator/"): a module may
import modules of its own layer or a lower one, never a higher one, and no group of
modules imports itself in a circle. Read from the source with ``ast``, like the stdlib
test of ``scoring/``."""

from __future__ import annotations

import pytest

from tests.architecture.imports import cycles, graph, modules

# One folder per layer (README, "Inside annotator/"); Django's fixed places (the app's
# config, its management commands) are entry points too. Lower number = lower layer.
LAYERS: dict[str, int] = {
    "annotator.base": 1,  # no models, no queries: pure code, adapters, media, the sandbox
    "annotator.models": 2,  # the tables and the schema validation of a task kind
    "annotator.reads": 3,  # every read decision, presenters, verified reads; never a write
    "annotator.actions": 4,  # one do_* per write operation, its check_* in front
    "annotator.entry": 5,  # API, pages, Celery tasks, consumers, URLs, system checks
    "annotator.management": 5,
    "annotator.apps": 5,
}


def layer(module: str) -> int:
    floor = ".".join(module.split(".")[:2])
    if floor not in LAYERS:
        raise LookupError(f"{module} is in no layer folder: move it into one of {sorted(LAYERS)}")
    return LAYERS[floor]


EDGES = graph()


def test_the_graph_sees_the_package():
    assert {"annotator.actions.grading", "annotator.reads.grading", "annotator.reads.present"} <= set(modules())
    assert "annotator.reads.documents" in EDGES["annotator.reads.export"]


@pytest.mark.parametrize("module", sorted(m for m in EDGES if m != "annotator"))
def test_every_module_imports_only_its_own_layer_or_lower(module: str):
    upward = sorted(target for target in EDGES[module] if layer(target) > layer(module))
    assert upward == [], f"{module} (layer {layer(module)}) imports a higher layer"


def test_no_import_cycles_inside_annotator():
    assert cycles(EDGES) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
