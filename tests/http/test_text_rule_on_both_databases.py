"""Every stored field judged alike on both databases (``annotator.models.checked``): text
longer than its column, NUL in text (multipart fields and tus metadata too), integers past
the column's range and numbers that are not finite are a 400 naming the field, before
storage, on SQLite as on PostgreSQL (where they were 500s, and SQLite stored them).
Run on both: ``DATABASE_URL=postgres://…`` for the PostgreSQL pass."""

from __future__ import annotations

import base64
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.errors import InvalidInput
from annotator.models import Packet, Project, ResumableUpload, Submission, TaskKind, Video
from annotator.models.checked import check_row
from tests.factories import client_for, make_ready_video

pytestmark = pytest.mark.django_db
NUL = "\x00"


def assert_refused(response, field: str) -> None:
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["field"] == field, error


def test_a_packet_title_longer_than_its_column_is_a_400_naming_title(maintainer, annotator_a, annotator_b, adjudicator):
    video = make_ready_video()
    body = {
        "title": "t" * 20_000, "video": video.pk, "task_kind": "action-ledger",
        "annotator_a": annotator_a.username, "annotator_b": annotator_b.username, "adjudicator": adjudicator.username,
    }  # fmt: skip
    response = client_for(maintainer).post("/api/packets/", body, format="json")
    assert_refused(response, "title")
    assert "at most 300 characters" in response.json()["error"]["message"]
    assert not Packet.objects.exists()


def test_nul_in_a_multipart_submission_label_is_a_400_naming_label(packet, maintainer):
    content = json.dumps({"actions": []}).encode()
    body = {"file": SimpleUploadedFile("a.json", content), "label": f"agent{NUL}x"}
    response = client_for(maintainer).post(f"/api/packets/{packet.pk}/submissions/", body, format="multipart")
    assert_refused(response, "label")
    assert not Submission.objects.exists()


def test_nul_in_a_multipart_video_title_is_a_400_naming_title_and_keeps_no_file(maintainer, settings):
    from pathlib import Path

    body = {"file": SimpleUploadedFile("match.mp4", b"x" * 10), "title": f"Match{NUL}1"}
    response = client_for(maintainer).post("/api/videos/", body, format="multipart")
    assert_refused(response, "title")
    assert not Video.objects.exists()
    kept = [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()]
    assert not [p for p in kept if "match" in p.name], kept


def test_nul_in_a_tus_upload_metadata_filename_is_a_400(maintainer):
    name = base64.b64encode(f"match{NUL}.mp4".encode()).decode()
    response = client_for(maintainer).post(
        "/api/uploads/",
        HTTP_UPLOAD_LENGTH="10",
        HTTP_UPLOAD_METADATA=f"filename {name},title {base64.b64encode(b'match').decode()}",
        HTTP_TUS_RESUMABLE="1.0.0",
    )
    assert_refused(response, "filename")
    assert not ResumableUpload.objects.exists()


@pytest.mark.parametrize(
    "row, words",
    [
        ({"vid": "v" * 400}, "at most 200 characters"),
        ({"vid": f"v{NUL}1"}, "control characters"),
        ({"duration": 1e308}, "at most"),
        ({"qid": "q" * 400}, "at most 40 characters"),
    ],
)
def test_moment_import_ids_and_durations_out_of_range_are_a_400(
    row, words, maintainer, annotator_a, annotator_b, adjudicator
):
    line = {
        "qid": 1,
        "query": "a person opens a door",
        "vid": "v1",
        "duration": 30,
        "relevant_windows": [[0, 2]],
        **row,
    }
    upload = io.BytesIO(json.dumps(line).encode() + b"\n")
    upload.name = "release.jsonl"
    body = {"source": "qvhighlights", "annotator_a": annotator_a.username, "annotator_b": annotator_b.username,
            "adjudicator": adjudicator.username, "file": upload}  # fmt: skip
    response = client_for(maintainer).post("/api/moment-imports/", body)
    assert_refused(response, "file")
    assert words in response.json()["error"]["message"]
    assert not Video.objects.exists()


def test_the_rule_judges_every_field_kind_before_storage(maintainer):
    kind = TaskKind.objects.first() or TaskKind.objects.create(slug="k", name="k", schema={}, scorer_id="x")
    cases = [
        (Project(title="p" * 301, task_kind=kind, created_by=maintainer), "title"),
        (Project(title="p", parameters={"k": f"a{NUL}"}, task_kind=kind), "parameters"),
        (Video(title="v", duration=float("inf")), "duration"),
        (Video(title="v", duration=1e308), "duration"),
        (Video(title="v", frame_count=2**31), "frame_count"),
        (Video(title="v", original_name="x" * 301), "original_name"),
        (Video(title="a\x1b[31mred"), "title"),
    ]
    for row, field in cases:
        with pytest.raises(InvalidInput) as refused:
            check_row(row)
        assert refused.value.field == field, (row, refused.value.message)
    check_row(Video(title="v" * 300, duration=3600.0, frame_count=2**31 - 1))  # at the limits: accepted
