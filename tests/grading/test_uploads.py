"""Uploading submissions: one file, several labelled files, a zip; kept as uploaded."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.grading.uploads import ByteCap, UploadRefused, expand_zip, label_for_path, read_capped
from annotator.models import Submission
from tests.factories import client_for


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("rollouts/codex-v10-full-media.submitted-solution.json", "rollouts/codex-v10-full-media"),
        ("baselines/anchors/oracle/solution.json", "baselines/anchors/oracle"),
        ("claude-opus-4.8.partial.solution.json", "claude-opus-4.8.partial"),
        ("run-7.json", "run-7"),
        ("agent-b/answers.jsonl", "agent-b/answers"),
        ("solution.json", "solution"),
    ],
)
def test_a_path_names_its_run(path, label):
    assert label_for_path(path) == label


def test_a_file_over_the_cap_is_hashed_whole_but_not_kept():
    data = [b"x" * 60, b"y" * 60]
    assert read_capped(data, ByteCap(120, "")) == (b"".join(data), hashlib.sha256(b"".join(data)).hexdigest(), 120)
    assert read_capped(data, ByteCap(119, "")) == (None, hashlib.sha256(b"".join(data)).hexdigest(), 120)


def zip_bytes(entries: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    buffer.seek(0)
    return buffer


def test_a_zip_is_labelled_by_path_without_its_common_folder_or_hidden_files():
    archive = zip_bytes(
        {
            "batch/agent-a/solution.json": b"{}",
            "batch/agent-b.solution.json": b"[]",
            "batch/notes.txt": b"not a submission",
            "batch/.DS_Store": b"",
            "__MACOSX/batch/._agent-b.solution.json": b"",
        }
    )
    files = expand_zip(archive, ByteCap(100, "too big"))
    assert [(f.label, f.name, f.content) for f in files] == [
        ("agent-a", "solution.json", b"{}"),
        ("agent-b", "agent-b.solution.json", b"[]"),
        ("notes", "notes.txt", b"not a submission"),
    ]
    archive.seek(0)
    assert [f.label for f in expand_zip(archive, ByteCap(100, ""), include="*solution.json")] == ["agent-a", "agent-b"]
    with pytest.raises(UploadRefused, match="not a readable zip"):
        expand_zip(io.BytesIO(b"PK but not really"), ByteCap(100, ""))


@pytest.mark.django_db
def test_one_file_several_files_and_a_zip_are_stored_as_uploaded(gtea_packet, maintainer):
    client = client_for(maintainer)
    url = f"/api/packets/{gtea_packet.pk}/submissions/"
    one = b'{"actions": []}\n'
    response = client.post(
        url, {"file": SimpleUploadedFile("x.json", one), "label": "my agent, run 1"}, format="multipart"
    )
    assert response.status_code == 201, response.content
    (row,) = response.json()["submissions"]
    assert (row["label"], row["sha256"], row["size_bytes"], row["kept"]) == (
        "my agent, run 1", hashlib.sha256(one).hexdigest(), len(one), True
    )  # fmt: skip
    assert client.get(f"/api/submissions/{row['id']}/content/").content == one

    files = [SimpleUploadedFile(f"{n}.json", f'{{"actions": [], "n": {n}}}'.encode()) for n in range(3)]
    response = client.post(url, {"files": files, "labels": ["a", "b", "c"]}, format="multipart")
    assert response.status_code == 201
    batch = response.json()
    assert [s["label"] for s in batch["submissions"]] == ["a", "b", "c"]
    assert len({s["batch"] for s in batch["submissions"]}) == 1

    response = client.post(url, {"archive": zip_bytes({"r/one.solution.json": one, "r/two.solution.json": one})},
                           format="multipart")  # fmt: skip
    assert [s["label"] for s in response.json()["submissions"]] == ["one", "two"]
    assert Submission.objects.filter(packet=gtea_packet).count() == 6

    files = [SimpleUploadedFile(f"{n}.json", b"{}") for n in range(2)]
    response = client.post(url, {"files": files, "labels": ["only one"]}, format="multipart")
    assert response.status_code == 400 and response.json()["error"]["field"] == "labels"
    response = client.post(url, {"archive": SimpleUploadedFile("x.zip", b"nope")}, format="multipart")
    assert response.status_code == 400 and response.json()["error"]["field"] == "archive"
    assert client.post(url, {}, format="multipart").status_code == 400
    assert Submission.objects.filter(packet=gtea_packet).count() == 6


@pytest.mark.django_db
def test_the_scorers_byte_cap_applies_at_upload(gtea_packet, maintainer):
    big = b'{"actions": []}' + b" " * 2_000_000
    response = client_for(maintainer).post(
        f"/api/packets/{gtea_packet.pk}/submissions/", {"file": SimpleUploadedFile("big.json", big)}, format="multipart"
    )
    assert response.status_code == 201
    (row,) = response.json()["submissions"]
    assert (row["kept"], row["size_bytes"], row["sha256"]) == (False, len(big), hashlib.sha256(big).hexdigest())
    assert row["rejected_reason"] == "solution exceeds 2000000 bytes"
    listed = client_for(maintainer).get(f"/api/packets/{gtea_packet.pk}/submissions/").json()
    assert [(s["id"], s["kept"]) for s in listed] == [(row["id"], False)]


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["annotator_a", "adjudicator", "outsider"])
def test_only_maintainers_upload_or_list(who, gtea_packet, request):
    client = client_for(request.getfixturevalue(who))
    url = f"/api/packets/{gtea_packet.pk}/submissions/"
    response = client.post(url, {"file": SimpleUploadedFile("x.json", b"{}")}, format="multipart")
    assert response.status_code == 404
    assert client.get(url).status_code == 404
    assert not Submission.objects.exists()
