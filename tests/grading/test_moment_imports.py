"""Real moment annotations in: QVHighlights val and Charades-STA (with the re-annotation
CSVs) rows imported as moment packets with a provisional version, one per video. The
export of such a version is the scorer's ground-truth file and scores 1.0 with its own
oracle; the calibration anchors hold."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from annotator.models import GroundTruthVersion, Packet, VersionCalibration
from annotator.reads.export import export_files
from annotator.reads.grading_inputs import task_parameters
from scoring import score_submission
from tests.factories import after_commit, client_for

DATA = Path(settings.BASE_DIR) / "data"
QV_VAL = DATA / "qvhighlights" / "highlight_val_release.jsonl"
CHARADES_TEST = DATA / "charades-lighthouse" / "charades_test_release.jsonl"
REANNOTATED = [DATA / "charades-sta-reannotated" / f"test_0{i}.csv" for i in range(3)]


def file_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def people(annotator_a, annotator_b, adjudicator) -> list[str]:
    return [
        f"--annotator-a={annotator_a.username}",
        f"--annotator-b={annotator_b.username}",
        f"--adjudicator={adjudicator.username}",
    ]


def oracle_scores_one(version: GroundTruthVersion) -> dict:
    files = export_files(version)
    gt = json.loads(files["gt.json"])
    params = task_parameters(version.packet, version.packet.task_kind.scorer_id)
    result = score_submission("moment-utility-v1", gt, files["oracle.jsonl"], **params)
    assert result.reward == 1.0, result.details
    return gt


@pytest.mark.django_db
def test_qvhighlights_val_videos_become_packets_whose_export_is_the_ground_truth(
    maintainer, annotator_a, annotator_b, adjudicator
):
    out = io.StringIO()
    args = [str(QV_VAL), "--source=qvhighlights", "--limit-videos=3", f"--actor={maintainer.username}"]
    with after_commit():  # the versions' anchors are computed once the import commits
        call_command("import_moments", *args, *people(annotator_a, annotator_b, adjudicator), stdout=out)
    assert "3 created, 0 updated, 0 unchanged" in out.getvalue()
    rows = file_rows(QV_VAL)
    first_videos = list(dict.fromkeys(r["vid"] for r in rows))[:3]
    packets = Packet.objects.filter(task_kind__slug="moment-queries-published").order_by("id")
    assert [p.parameters["video_id"] for p in packets] == first_videos
    for packet in packets:
        expected = [r for r in rows if r["vid"] == packet.parameters["video_id"]]
        assert packet.parameters["grid"] == {"step": 2.0} and packet.video.duration == expected[0]["duration"]
        version = GroundTruthVersion.objects.get(packet=packet)
        assert version.tier == "provisional"
        gt = oracle_scores_one(version)
        assert gt == {
            "queries": sorted(
                (
                    {"query_id": f"qv{r['qid']}", "video_id": r["vid"], "source": "qvhighlights",
                     "intervals": [[float(s), float(e)] for s, e in r["relevant_windows"]]}
                    for r in expected
                ),
                key=lambda q: q["query_id"],
            )
        }  # fmt: skip
        calibration = VersionCalibration.objects.get(version=version)
        assert calibration.status == "ok", calibration.problems
    again = io.StringIO()
    call_command("import_moments", *args, *people(annotator_a, annotator_b, adjudicator), stdout=again)
    assert "0 created, 0 updated, 3 unchanged" in again.getvalue()
    assert GroundTruthVersion.objects.count() == 3


@pytest.mark.django_db
def test_charades_sta_with_reannotations_off_the_grid_still_has_a_perfect_oracle(
    maintainer, annotator_a, annotator_b, adjudicator
):
    args = [str(CHARADES_TEST), "--source=charades-sta", "--videos=YAFX0", "--reannotated", *map(str, REANNOTATED)]
    with after_commit():
        call_command("import_moments", *args, *people(annotator_a, annotator_b, adjudicator), stdout=io.StringIO())
    packet = Packet.objects.get(parameters__video_id="YAFX0")
    assert packet.parameters["grid"] == {"step": 1.0} and packet.video.duration == 37.42
    version = GroundTruthVersion.objects.get(packet=packet)
    gt = oracle_scores_one(version)
    by_id = {q["query_id"]: q["intervals"] for q in gt["queries"]}
    assert len(by_id) == 6
    # The original label first, then the five re-annotations (percent of 37.42 s).
    washer = by_id["ch14572"]
    assert washer[0] == [6.2, 14.9] and len(washer) == 6
    assert washer[1] == [round(55 * 37.42 / 100, 6), round(81 * 37.42 / 100, 6)]
    assert by_id["ch14573"] == [[4.2, 9.3]]  # no re-annotation for this query
    oracle = [json.loads(line) for line in export_files(version)["oracle.jsonl"].splitlines()]
    assert all(float(row["start"]).is_integer() and float(row["end"]).is_integer() for row in oracle)
    assert VersionCalibration.objects.get(version=version).status == "ok"


@pytest.mark.django_db
def test_the_api_route_is_for_maintainers_and_a_bad_row_stores_nothing(
    maintainer, annotator_a, annotator_b, adjudicator
):
    good = b"".join(QV_VAL.read_bytes().splitlines(keepends=True)[:2])
    names = {"annotator_a": annotator_a.username, "annotator_b": annotator_b.username}
    form = {"source": "qvhighlights", **names, "adjudicator": adjudicator.username}

    def upload(data: bytes):
        handle = io.BytesIO(data)
        handle.name = "highlight_val_release.jsonl"
        return handle

    assert client_for(annotator_a).post("/api/moment-imports/", {**form, "file": upload(good)}).status_code == 404
    bad = good + b'{"qid": 1, "query": "x", "vid": "v", "duration": 10, "relevant_windows": [[5, 2]]}\n'
    response = client_for(maintainer).post("/api/moment-imports/", {**form, "file": upload(bad)})
    assert response.status_code == 400
    assert "line 3" in json.dumps(response.json()) and "reversed" in json.dumps(response.json())
    assert Packet.objects.count() == 0
    response = client_for(maintainer).post("/api/moment-imports/", {**form, "file": upload(good)})
    assert response.status_code == 201, response.json()
    assert response.json()["created"] == len({json.loads(line)["vid"] for line in good.splitlines()})


@pytest.mark.django_db
def test_a_maintainer_who_annotates_a_packet_cannot_write_or_probe_its_provisional_tier(
    maintainer, annotator_a, adjudicator
):
    from annotator.reads.access import visible_audit_entries
    from tests.factories import make_user

    blind = make_user("maintainer_b", maintainer=True)
    good = b"".join(QV_VAL.read_bytes().splitlines(keepends=True)[:1])
    changed = good.replace(b'"relevant_windows": [[', b'"relevant_windows": [[0, 2], [', 1)
    form = {"source": "qvhighlights", "annotator_a": annotator_a.username, "annotator_b": blind.username,
            "adjudicator": adjudicator.username}  # fmt: skip

    def upload(data: bytes):
        handle = io.BytesIO(data)
        handle.name = "highlight_val_release.jsonl"
        return {**form, "file": handle}

    assert client_for(maintainer).post("/api/moment-imports/", upload(good)).status_code == 201
    [packet] = Packet.objects.all()
    versions = GroundTruthVersion.objects.count()
    for data in (good, changed):  # "unchanged" was an equality oracle, "updated" a write
        response = client_for(blind).post("/api/moment-imports/", upload(data))
        assert response.status_code == 400, response.json()
        body = json.dumps(response.json())
        assert "unchanged" not in body and "version" not in body
    assert GroundTruthVersion.objects.count() == versions
    # Naming himself on a new packet is refused the same way: he would hold its key.
    other = QV_VAL.read_bytes().splitlines(keepends=True)[5]
    assert client_for(blind).post("/api/moment-imports/", upload(other)).status_code == 400
    assert Packet.objects.count() == 1 and packet.annotator_b_id == blind.pk
    # Another maintainer's later import that updates his packet's provisional labels is not
    # shown in his audit view across packets ("updated: 1" would say so); to its maker it is.
    assert client_for(maintainer).post("/api/moment-imports/", upload(changed)).status_code == 201
    imports = [e for e in visible_audit_entries(blind) if e.operation == "import_moment_packets"]
    assert imports == [] and b"import_moment_packets" not in client_for(blind).get("/audit/").content
    mine = [e for e in visible_audit_entries(maintainer) if e.operation == "import_moment_packets"]
    assert len(mine) == 2 and mine[0].details.get("updated", 0) + mine[1].details.get("updated", 0) == 1
