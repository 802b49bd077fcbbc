"""Moment imports under the caps of every archive-like upload: rows counted before a line
is parsed (``moment_sources.MAX_ROWS``), re-annotation files counted, the request's
allocations flat however many rows a file holds."""

from __future__ import annotations

import io
import tracemalloc

import pytest

from annotator.base.moment_sources import MAX_REANNOTATION_FILES, MAX_ROWS
from annotator.models import Packet
from tests.factories import client_for

ROW = b'{"qid": %d, "query": "a person opens a door", "vid": "v%d", "duration": 30, "relevant_windows": [[0, 2]]}\n'
MiB = 1024 * 1024


def form(annotator_a, annotator_b, adjudicator, data: bytes, *, reannotated=()) -> dict:
    def handle(name, body):
        upload = io.BytesIO(body)
        upload.name = name
        return upload

    body = {
        "source": "charades-sta" if reannotated else "qvhighlights",
        "annotator_a": annotator_a.username,
        "annotator_b": annotator_b.username,
        "adjudicator": adjudicator.username,
        "file": handle("release.jsonl", data),
    }
    if reannotated:
        body["reannotated"] = [handle(f"re{i}.csv", part) for i, part in enumerate(reannotated)]
    return body


@pytest.mark.django_db
def test_a_file_of_more_rows_than_the_cap_is_a_400_before_any_row_is_parsed(
    maintainer, annotator_a, annotator_b, adjudicator
):
    data = b"".join(ROW % (i, i % 97) for i in range(MAX_ROWS + 1))
    tracemalloc.start()
    try:
        response = client_for(maintainer).post(
            "/api/moment-imports/", form(annotator_a, annotator_b, adjudicator, data)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["field"] == "file" and f"{MAX_ROWS} rows" in error["message"]
    assert peak < 4 * len(data) + 8 * MiB  # the body as the client builds and the server reads it; no rows
    assert not Packet.objects.exists()


@pytest.mark.django_db
def test_more_re_annotation_files_than_the_cap_are_a_400(maintainer, annotator_a, annotator_b, adjudicator):
    csv = b"video_id,description,start,end\nv1.mp4,a person opens a door,0,10\n"
    data = ROW % (1, 1)
    extra = [csv] * (MAX_REANNOTATION_FILES + 1)
    body = form(annotator_a, annotator_b, adjudicator, data, reannotated=extra)
    response = client_for(maintainer).post("/api/moment-imports/", body)
    assert response.status_code == 400 and "re-annotation files" in response.json()["error"]["message"]
    body = form(annotator_a, annotator_b, adjudicator, data, reannotated=extra[:MAX_REANNOTATION_FILES])
    assert client_for(maintainer).post("/api/moment-imports/", body).status_code == 201
