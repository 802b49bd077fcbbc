"""A fourth task family walked through the whole house: registered in the test (a toy
scorer in the scorer registry, a toy adapter in ``annotator.base.families``) and then
created, annotated, frozen, unioned, adjudicated, published, exported, calibrated,
graded, ranked, diagnosed and compared, with no other code changed.

And the rule that makes this possible: no module outside ``annotator/base/families/`` branches
on a family name, and no script or template of the browser names one (what the browser shows
differently comes inside the schema the API sends, ``schema.ui``, from the adapter)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from annotator.actions.adjudication import do_decide_item
from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions, run_chunks
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.taskkinds import do_create_task_kind
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_publish_adjudicated_version
from annotator.base.families import FamilyAdapter, register_adapter, unregister_adapter
from annotator.base.families.base import dumps
from annotator.base.grading.uploads import byte_cap, make_file
from annotator.models import Ledger, VersionCalibration
from annotator.reads import grading as reads
from annotator.reads.export import export_files
from scoring import Anchor, Scorer, ScoreResult, UnionItem
from scoring.registry import BUILTIN_FAMILIES, register_scorer, unregister_scorer
from tests.factories import after_commit, make_packet

ROOT = Path(__file__).resolve().parents[2]
FAMILY = "markers"
SCORER_ID = "marker-f1-v1"
ATTESTATION = "I marked this video alone, from the video only."
SCHEMA = {
    "family": FAMILY,
    "root_key": "markers",
    "fields": [{"name": "frame", "type": "int", "frame": True}],
    "identity_fields": [],
    "boundary_fields": [],
    "tolerance": 0,
    "sort_keys": ["frame"],
}


def _frames(document) -> set[int]:
    return {m["frame"] for m in document["markers"]}


def toy_score(ground_truth, solution) -> ScoreResult:
    """F1 of the marked frames, exact frames only."""
    reason = ""
    try:
        if isinstance(solution, BaseException):
            raise ValueError(str(solution))
        predicted = _frames(json.loads(bytes(solution)))
    except (ValueError, KeyError, TypeError) as error:
        predicted, reason = set(), f"invalid solution: {error}"
    truth = _frames(ground_truth)
    hits = len(predicted & truth)
    f1 = round(2 * hits / (len(predicted) + len(truth)), 6) if predicted or truth else 1.0
    details = {"reason": reason, "hits": hits, "predicted": len(predicted), "f1": f1}
    return ScoreResult(
        reward=f1,
        reward_json=json.dumps({"reward": f1}).encode(),
        reward_txt=f"{f1}\n".encode(),
        details_json=json.dumps(details).encode(),
        details=details,
        reason=reason,
        scorer_id=SCORER_ID,
    )


def toy_anchors(run, ground_truth, params) -> list[Anchor]:
    return [
        Anchor("oracle", run(json.dumps(ground_truth).encode()), "the ground truth itself"),
        Anchor("empty", run(b'{"markers": []}'), "no markers"),
    ]


def toy_agreement(ledger_a, ledger_b, params) -> dict:
    a, b = _frames(ledger_a), _frames(ledger_b)
    return {"common": len(a & b), "a_only": len(a - b), "b_only": len(b - a)}


def toy_diagnose(ground_truth, solution, params, details, *, reference_frames, frame_rate) -> dict:
    truth = sorted(_frames(ground_truth))
    return {"summary": dict(details), "reference": [{"index": i, "start_frame": f} for i, f in enumerate(truth)]}


class MarkersAdapter(FamilyAdapter):
    family = FAMILY

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        gt = dumps(submission)
        return {"gt.json": gt, "vocabulary.json": dumps({}), "oracle.json": gt}

    def union(self, a_scored, b_scored, *, schema, scorer) -> list:
        b_left = {m["frame"]: j for j, m in enumerate(b_scored)}
        items = []
        for i, marker in enumerate(a_scored):
            j = b_left.pop(marker["frame"], None)
            items.append(UnionItem("agreed" if j is not None else "a_only", i, j))
        return items + [UnionItem("b_only", None, j) for j in b_left.values()]


@pytest.fixture
def toy_family():
    register_scorer(
        Scorer(
            SCORER_ID, FAMILY, "v1", "toy: F1 of marked frames", (), False, toy_score,
            solution_cap=1000, solution_cap_reason="solution exceeds 1000 bytes", key_metrics=("hits", "predicted"),
            anchors_fn=toy_anchors, agreement_fn=toy_agreement, diagnose_fn=toy_diagnose,
        )
    )  # fmt: skip
    register_adapter(MarkersAdapter())
    yield
    unregister_adapter(FAMILY)
    unregister_scorer(SCORER_ID)


def _fill_and_freeze(packet, side, user, frames):
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, frame in enumerate(frames):
        do_add_event(ledger, {"frame": frame}, actor=user, expected_version=version)
    do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(frames))


@pytest.mark.django_db
def test_a_fourth_family_goes_through_the_whole_protocol_with_a_scorer_and_an_adapter_only(
    toy_family, maintainer, annotator_a, annotator_b, adjudicator
):
    do_create_task_kind(actor=maintainer, slug="markers", name="Markers", scorer_id=SCORER_ID, schema=SCHEMA)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="markers")
    _fill_and_freeze(packet, "A", annotator_a, [30, 10, 20])
    _fill_and_freeze(packet, "B", annotator_b, [10, 20, 40])

    union = do_build_union(packet, actor=adjudicator)  # the adapter's alignment
    assert sorted(union.items.values_list("status", flat=True)) == ["a_only", "agreed", "agreed", "b_only"]
    for item in union.items.exclude(status="agreed"):
        do_decide_item(item, actor=adjudicator, action="take_a" if item.a_value else "drop", rationale="seen")
    with after_commit():  # the anchors and the report follow the publication's commit
        version = do_publish_adjudicated_version(packet, actor=adjudicator)

    files = export_files(version)  # the adapter's files, the common manifest
    assert json.loads(files["gt.json"]) == {"markers": [{"frame": 10}, {"frame": 20}, {"frame": 30}]}
    assert set(json.loads(files["manifest.json"])["files"]) == {
        "gt.json",
        "vocabulary.json",
        "oracle.json",
        "adjudication_log.json",
    }
    calibration = VersionCalibration.objects.get(version=version)  # the toy anchors, after publishing
    assert calibration.status == "ok" and [a["reward"] for a in calibration.anchors] == [1.0, 0.0]

    cap = byte_cap(SCORER_ID)  # the registry's cap
    uploads = [
        make_file("two right", "a.json", [b'{"markers": [{"frame": 10}, {"frame": 20}]}'], cap),
        make_file("too big", "b.json", [b" " * 1001], cap),
    ]
    submissions = do_upload_submissions(packet, uploads, actor=maintainer)
    assert submissions[1].rejected_reason == "solution exceeds 1000 bytes"
    run = do_start_scoring_run(version, submissions, actor=maintainer, dispatch=False)
    for chunk in run_chunks(run):
        do_score_batch(run.pk, chunk)

    board = reads.leaderboard(version, SCORER_ID)  # the registry's key metrics as columns
    assert board["columns"][-2:] == ["hits", "predicted"]
    assert [(r["kind"], r["label"], r["reward"], r["hits"]) for r in board["rows"]] == [
        ("human", "annotator A (annotator_a)", 1.0, 3),
        ("agent", "two right", 0.8, 2),
        ("human", "annotator B (annotator_b)", 0.666667, 2),
        ("agent", "too big", 0.0, 0),
    ]
    score = run.results.get(submission=submissions[0])
    diagnosed = reads.score_diagnostics(score)  # the scorer's own diagnose function
    assert diagnosed["family"] == FAMILY and [r["start_frame"] for r in diagnosed["reference"]] == [10, 20, 30]
    report = reads.agreement_report(packet).report  # stored at publish, the toy agreement
    assert report["a_vs_b"] == {"common": 2, "a_only": 1, "b_only": 1}
    assert report["versus_version"]["B"]["reward"] == 0.666667


def _family_branches(path: Path) -> list[int]:
    """Lines comparing something with a family name (``x == "moments"``, ``in (…)``)."""
    families = set(BUILTIN_FAMILIES)
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                values = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
                if any(isinstance(v, ast.Constant) and v.value in families for v in values):
                    lines.append(node.lineno)
    return lines


# Importers of one published dataset know its family: the GTEA command checks it is given
# an action packet; the moment importer (QVHighlights, Charades-STA) defines its task kind.
DATASET_COMMANDS = {"annotator/management/commands/import_gtea_labels.py", "annotator/actions/moment_imports.py"}


def test_no_module_outside_the_family_adapters_branches_on_a_family():
    checked = [
        path
        for folder in ("annotator", "frontend")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "families" not in path.parts and "migrations" not in path.parts
    ]
    assert len(checked) > 50
    found = {
        str(path.relative_to(ROOT)): lines
        for path in checked
        if (lines := _family_branches(path)) and str(path.relative_to(ROOT)) not in DATASET_COMMANDS
    }
    assert found == {}


def _knows_family(path: Path, family: str) -> bool:
    """The module names the family (a string constant) or imports its adapter module."""
    if path.suffix != ".py":
        return bool(_browser_mentions(path, family))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == family:
            return True
        if isinstance(node, ast.ImportFrom) and node.module == f"annotator.base.families.{family}":
            return True
    return False


def _browser_files() -> list[Path]:
    """The browser's code: every script and every template (their inline scripts and
    ``data-`` attributes run in the browser too)."""
    return sorted((ROOT / "frontend/static/frontend/js").rglob("*.js")) + sorted(
        (ROOT / "frontend/templates").rglob("*.html")
    )


def _browser_mentions(path: Path, family: str) -> list[int]:
    """Lines of a script or template that name the family: a quoted string that is the
    name (``"break_points"``, ``data-for='moments'``), an object key (``moments: [...]``)
    or a property (``x.break_points``)."""
    name = re.escape(family)
    pattern = re.compile(rf"""(["'`]){name}\1|(?<![\w$.]){name}\s*:(?!:)|\.{name}\b""")
    text = path.read_text(encoding="utf-8")
    return [text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)]


def test_no_browser_file_names_a_family():
    """The browser learns what a family shows differently from the schema the API sends
    (``schema.ui``, from the family's adapter), never from the family's name."""
    files = _browser_files()
    assert len([f for f in files if f.suffix == ".js"]) > 20
    found = {
        f"{path.relative_to(ROOT)}:{line}": family
        for path in files
        for family in BUILTIN_FAMILIES
        for line in _browser_mentions(path, family)
    }
    assert found == {}


def test_the_browser_scan_finds_a_family_name_and_not_words_that_contain_one(tmp_path):
    script = tmp_path / "page.js"
    script.write_text(
        'if (schema.family === "moments") go();\nconst S = {\n  break_points: [],\n};\nx.actions.push(1);\n'
        'const box = `<p data-for=\'moments\' class="decision-actions" id="moments-file">`;\n',
        encoding="utf-8",
    )
    assert _browser_mentions(script, "moments") == [1, 6]
    assert _browser_mentions(script, "break_points") == [3]
    assert _browser_mentions(script, "actions") == [5]
    assert _knows_family(script, "moments") and not _knows_family(script, "markers")


@pytest.mark.parametrize("family", BUILTIN_FAMILIES)
def test_a_family_is_known_to_its_adapter_its_registration_and_its_seed_kind_only(family):
    """What a new family touches in the application: its adapter module, one registration
    line, and (when it ships a seed task kind) builtin_kinds.py plus a data migration.
    The browser's scripts and templates count: none of them may know the family."""
    application = [
        path
        for folder in ("annotator", "frontend")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "migrations" not in path.parts
    ]
    knowing = {str(path.relative_to(ROOT)) for path in application + _browser_files() if _knows_family(path, family)}
    expected = {
        f"annotator/base/families/{family}.py",
        "annotator/base/families/__init__.py",
        "annotator/base/builtin_kinds.py",
    }
    assert knowing - DATASET_COMMANDS == expected
