"""Grading fixtures: the published tennis and GTEA ground truths imported as provisional
versions, and the published calibration submissions packed the way a maintainer
uploads them (one zip per batch)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command

from annotator.actions.adjudication import do_decide_item
from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions, run_chunks
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_import_provisional_version, do_publish_adjudicated_version
from annotator.base.grading.uploads import byte_cap, make_file
from annotator.models import GroundTruthVersion, Ledger, SubmissionScore
from tests.factories import after_commit, make_packet, make_ready_video

TENNIS = Path("data/agentic-vbench/medvedev-de-minaur-2023-us-open-break-point-ledger/calibration")
TENNIS_ORACLE = TENNIS / "baselines/anchors/oracle/solution.json"
EGOCENTRIC = Path("data/agentic-vbench/egocentric-activity-understanding")
GTEA_LABELS = EGOCENTRIC / "steps/solve/tests/Ahmad_American.txt"
TENNIS_FRAMES = 214363
GTEA_FRAMES = 25692


def tennis_submissions() -> dict[str, Path]:
    """Every published break-point submission: path inside the batch -> file."""
    files = sorted(TENNIS.glob("rollouts/*submitted-solution.json")) + sorted(
        TENNIS.glob("ablations/*submitted-solution.json")
    )
    files += sorted(TENNIS.glob("baselines/*/solution.json")) + sorted(TENNIS.glob("baselines/anchors/*/solution.json"))
    return {str(path.relative_to(TENNIS.parent)): path for path in files}


def tennis_golden(path: Path) -> Path:
    """The published output for a break-point submission (SCORING.md golden table)."""
    if path.name.endswith(".submitted-solution.json"):
        return path.with_name(path.name.replace(".submitted-solution.json", ".hierarchical-verifier-details.json"))
    if path.parent.parent.name == "anchors":
        return path.with_name("reward.json")
    return path.with_name("hierarchical-verifier-details.json")


def egocentric_submissions() -> dict[str, Path]:
    files = sorted((EGOCENTRIC / "calibration/rollouts").glob("*.solution.json"))
    return {str(path.relative_to(EGOCENTRIC)): path for path in files}


def zip_of(files: dict[str, Path]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, path in files.items():
            archive.writestr(name, path.read_bytes())
    buffer.seek(0)
    buffer.name = "batch.zip"
    return buffer


def score_in_process(run) -> None:
    """Score a run's pending batches in this process (the body of the Celery task)."""
    for chunk in run_chunks(run):
        do_score_batch(run.pk, chunk)


def upload(packet, actor, named: dict[str, bytes]):
    """Upload {label: bytes} as one batch, with the packet scorer's caps."""
    cap = byte_cap(packet.task_kind.scorer_id)
    files = [make_file(label, f"{label}.json", [data], cap) for label, data in named.items()]
    return do_upload_submissions(packet, files, actor=actor)


def scored(version, submissions, actor, **kwargs) -> dict[str, SubmissionScore]:
    """Run and score in this process; {label: final score}."""
    run = do_start_scoring_run(version, submissions, actor=actor, dispatch=False, **kwargs)
    score_in_process(run)
    return {s.submission.label: s for s in run.results.select_related("submission")}


@pytest.fixture
def tennis_packet(maintainer, annotator_a, annotator_b, adjudicator):
    video = make_ready_video("Medvedev v De Minaur, US Open 2023", frame_count=TENNIS_FRAMES, fps=(30000, 1001))
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=video)


@pytest.fixture
def tennis_version(tennis_packet, maintainer) -> GroundTruthVersion:
    data = TENNIS_ORACLE.read_bytes()
    events = json.loads(data)["break_points"]
    with after_commit():  # its anchors are computed after the publication commits
        return do_import_provisional_version(
            tennis_packet,
            events,
            actor=maintainer,
            source="oracle solution.json",
            source_sha256=hashlib.sha256(data).hexdigest(),
        )


@pytest.fixture
def gtea_packet(maintainer, annotator_a, annotator_b, adjudicator):
    video = make_ready_video("GTEA Ahmad American", frame_count=GTEA_FRAMES, fps=(24, 1))
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="action-ledger", video=video)


@pytest.fixture
def gtea_version(gtea_packet) -> GroundTruthVersion:
    with after_commit():
        call_command(
            "import_gtea_labels", str(GTEA_LABELS), packet=gtea_packet.pk, actor="maintainer", stdout=io.StringIO()
        )
    return GroundTruthVersion.objects.get(packet=gtea_packet, tier="provisional")


ATTESTATION = "I labelled this video alone, from the video only."
A_EVENTS = [("take", ["cup"], 100, 200), ("put", ["plate"], 1000, 1100), ("cut", ["bagel"], 3000, 3100)]
B_EVENTS = [("take", ["cup"], 100, 200), ("put", ["plate"], 1020, 1120), ("open", ["fridge"], 5000, 5050)]


def fill_and_freeze(packet, side, user, events):
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, (verb, nouns, start, end) in enumerate(events):
        data = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
        do_add_event(ledger, data, actor=user, expected_version=version)
    with after_commit():  # the second freeze leaves the agreement report for after its commit
        do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(events))


@pytest.fixture
def adjudicated(packet, annotator_a, annotator_b, adjudicator):
    """A's ledger wins every disagreement; B's extra event is dropped."""
    fill_and_freeze(packet, "A", annotator_a, A_EVENTS)
    fill_and_freeze(packet, "B", annotator_b, B_EVENTS)
    union = do_build_union(packet, actor=adjudicator)
    for item in union.items.exclude(status="agreed"):
        action = "take_a" if item.a_value else "drop"
        do_decide_item(item, actor=adjudicator, action=action, rationale="checked against the video")
    with after_commit():  # the anchors and the report against the version come after commit
        return do_publish_adjudicated_version(packet, actor=adjudicator)
