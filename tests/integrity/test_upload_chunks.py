"""A batch is stored and recorded a chunk at a time (issue 38: a 5,000-file batch raised the
web process by 420 MB): one audit entry per chunk holding only that chunk's seals, all with
the batch's id; every row of every chunk is still read through its seal, and
``verify_integrity`` still names a row changed by SQL in any chunk."""

from __future__ import annotations

import pytest

from annotator.actions import grading
from annotator.models import AuditEntry, Submission
from annotator.reads.integrity import describe
from tests.factories import client_for
from tests.grading.conftest import upload
from tests.integrity.tampering import tamper, verify

pytestmark = pytest.mark.django_db


def test_a_batch_is_recorded_a_chunk_at_a_time_and_every_chunk_verifies(packet, maintainer, monkeypatch):
    monkeypatch.setattr(grading, "UPLOAD_CHUNK", 3)
    created = upload(packet, maintainer, {f"agent-{k}": b'{"actions": []}' for k in range(7)})
    assert [s.label for s in created] == [f"agent-{k}" for k in range(7)]
    assert all(s.kept is True for s in created) and len({s.batch for s in created}) == 1
    entries = list(AuditEntry.objects.filter(operation="upload_submissions").order_by("seq"))
    assert [len(e.hashes["submissions"]) for e in entries] == [3, 3, 1]
    assert {e.hashes["batch"] for e in entries} == {created[0].batch}
    sealed = {pk for e in entries for pk in e.hashes["submissions"]}
    assert sealed == {str(s.pk) for s in created}
    client = client_for(maintainer)
    listed = client.get(f"/api/packets/{packet.pk}/submissions/")
    assert listed.status_code == 200 and len(listed.json()) == 7
    code, out = verify()
    assert code == 0, out

    last = Submission.objects.get(pk=created[-1].pk)  # the third chunk's only row
    tamper(last, label="agent-forged")
    response = client.get(f"/api/submissions/{last.pk}/")
    assert response.status_code == 500 and response.json()["error"]["code"] == "integrity_error"
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(Submission.objects.get(pk=last.pk))}" in out, out


def test_an_uploads_answer_says_which_files_were_kept(packet, maintainer):
    over = b'{"actions": []}' + b" " * 2_000_000
    client = client_for(maintainer)
    files = {"files": [_named("small.json", b'{"actions": []}'), _named("big.json", over)]}
    body = client.post(f"/api/packets/{packet.pk}/submissions/", files, format="multipart").json()
    assert [(s["original_name"], s["kept"]) for s in body["submissions"]] == [("small.json", True), ("big.json", False)]


def _named(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)
