"""Issue 27: bundles and agent submissions over the same resumable (tus) uploads as videos.
A finished upload's key stands in for the multipart file on the bundle and submission
routes, under the checks and caps those routes apply to a file; the upload must be the
requester's and is taken once. The last test cuts a real connection to the embedded
default's server in the middle of a bundle's piece at 50 %, resumes, and submits it."""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotator.actions.tokens import do_issue_token
from annotator.actions.uploads import do_expire_uploads, part_path
from annotator.models import BundleRun, ResumableUpload, Submission
from tests.factories import client_for, make_user
from tests.grading.test_bundle_uploads import plain
from tests.grading.test_bundles import synthetic_version
from tests.http import live_server
from tests.http.live_server import read_response
from tests.media.test_resumable_upload import TUS, b64, patch, upload_with_a_cut

embedded = live_server.embedded  # the uvicorn child fixture (tests/http/live_server.py)


def create(client, length: int, kind: str, filename: str = "b.zip"):
    return client.post(
        "/api/uploads/", HTTP_UPLOAD_LENGTH=str(length),
        HTTP_UPLOAD_METADATA=f"filename {b64(filename)},kind {b64(kind)}", **TUS,
    )  # fmt: skip


def uploaded(client, data: bytes, kind: str, filename: str = "b.zip", pieces: int = 3) -> str:
    created = create(client, len(data), kind, filename)
    assert created.status_code == 201, created.content
    url, step = created["Location"], -(-len(data) // pieces)
    for offset in range(0, len(data), step):
        assert patch(client, url, offset, data[offset : offset + step]).status_code == 204
    return created.json()["key"]


@pytest.mark.django_db
def test_a_finished_bundle_upload_is_submitted_by_its_key_once(
    maintainer, annotator_a, annotator_b, adjudicator, tmp_path, settings, django_capture_on_commit_callbacks
):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, tmp_path)
    client = client_for(maintainer)
    url = f"/api/versions/{version.pk}/bundles/"
    data = plain({"lib/model.py": b"print(1)\n" * 1000})
    key = uploaded(client, data, "bundle", "system.zip")
    state = client.get(f"/api/uploads/{key}/").json()
    assert (state["kind"], state["complete"], state["consumed"], state["video"]) == ("bundle", True, False, None)
    with django_capture_on_commit_callbacks(execute=True):  # the bytes go after the commit
        run = client.post(url, {"bundle_upload": key}, format="json")
    assert run.status_code == 202, run.json()
    stored = BundleRun.objects.get(pk=run.json()["id"])
    assert bytes(stored.bundle) == data and stored.bundle_sha256 == hashlib.sha256(data).hexdigest()
    assert stored.label == "system.zip"  # the upload's file name, as a multipart file's
    upload = ResumableUpload.objects.get(key=key)
    assert upload.consumed_at is not None and not part_path(upload).exists()
    again = client.post(url, {"bundle_upload": key}, format="json")
    assert again.status_code == 409 and BundleRun.objects.count() == 1
    assert client.delete(f"/api/uploads/{key}/", **TUS).status_code == 409  # used: not removable either

    # The zip checks of a multipart bundle: refused naming the entry, nothing stored, and
    # the upload is not consumed (it can be deleted).
    bad = uploaded(client, plain({"a/../../x": b""}), "bundle")
    refused = client.post(url, {"bundle_upload": bad, "label": "bad"}, format="json")
    assert refused.status_code == 400 and "a/../../x" in json.dumps(refused.json())
    assert ResumableUpload.objects.get(key=bad).consumed_at is None and BundleRun.objects.count() == 1
    assert client.delete(f"/api/uploads/{bad}/", **TUS).status_code == 204

    # The bundle's byte cap already at creation; another kind, an unfinished upload, another
    # person's upload.
    too_big = create(client, settings.FRAMELEDGER_BUNDLE_MAX_BYTES + 1, "bundle")
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "too_large"
    submission = uploaded(client, data, "submission")
    wrong_kind = client.post(url, {"bundle_upload": submission, "label": "x"}, format="json")
    assert wrong_kind.status_code == 400 and wrong_kind.json()["error"]["field"] == "bundle_upload"
    half = create(client, len(data), "bundle").json()["key"]
    assert patch(client, f"/api/uploads/{half}/", 0, data[:100]).status_code == 204
    assert client.post(url, {"bundle_upload": half, "label": "x"}, format="json").status_code == 409
    theirs = uploaded(client_for(make_user("second-maintainer", maintainer=True)), data, "bundle")
    assert client.post(url, {"bundle_upload": theirs, "label": "x"}, format="json").status_code == 404
    assert BundleRun.objects.count() == 1
    assert create(client, 10, "weights").status_code == 400
    # A day later the sweep removes what no route took, finished or not; the used one stays.
    later = timezone.now() + timedelta(seconds=settings.FRAMELEDGER_UPLOAD_EXPIRE_SECONDS + 1)
    assert set(do_expire_uploads(now=later)) == {submission, half, theirs}
    assert list(ResumableUpload.objects.values_list("key", flat=True)) == [key]


@pytest.mark.django_db
def test_submission_uploads_are_taken_as_files_and_archives_under_the_same_caps(tennis_packet, maintainer, settings):
    settings.FRAMELEDGER_MAX_SUBMISSION_BYTES = 1000
    client = client_for(maintainer)
    url = f"/api/packets/{tennis_packet.pk}/submissions/"
    small, large = b'{"events": []}', b"x" * 1500
    one = uploaded(client, small, "submission", "agent-a.solution.json")
    over = uploaded(client, large, "submission", "agent-b.solution.json")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("batch/agent-c/solution.json", small)
        archive.writestr("batch/agent-d/solution.json", large)
    zipped = uploaded(client, buffer.getvalue(), "submission", "batch.zip")
    body = {"file_upload": [one, over], "archive_upload": [zipped]}
    created = client.post(url, body, format="json")
    assert created.status_code == 201, created.json()
    rows = {s.label: s for s in Submission.objects.all()}
    assert set(rows) == {"agent-a", "agent-b", "agent-c", "agent-d"}
    assert bytes(rows["agent-a"].content) == small and bytes(rows["agent-c"].content) == small
    for label in ("agent-b", "agent-d"):  # over the cap: hashed whole, not kept, as multipart
        assert rows[label].content is None and rows[label].size_bytes == 1500
        assert rows[label].sha256 == hashlib.sha256(large).hexdigest() and "1000 bytes" in rows[label].rejected_reason
    assert all(u.consumed_at for u in ResumableUpload.objects.filter(key__in=[one, over, zipped]))
    assert client.post(url, {"file_upload": [one]}, format="json").status_code == 409
    # A refused archive refuses the batch: nothing stored, no upload consumed.
    fresh = uploaded(client, small, "submission", "e.solution.json")
    broken = uploaded(client, b"PK\x03\x04 not a zip", "submission", "x.zip")
    refused = client.post(url, {"file_upload": [fresh], "archive_upload": [broken]}, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "archive_upload"
    assert Submission.objects.count() == 4
    assert not ResumableUpload.objects.filter(key__in=[fresh, broken], consumed_at__isnull=False).exists()
    twice = client.post(url, {"file_upload": [fresh, fresh]}, format="json")
    assert twice.status_code == 400 and Submission.objects.count() == 4
    too_big = create(client, settings.FRAMELEDGER_MAX_SUBMISSION_UPLOAD_BYTES + 1, "submission")
    assert too_big.status_code == 413


@pytest.mark.django_db(transaction=True)
def test_a_bundle_cut_at_50_percent_resumes_and_the_stored_bundle_is_the_source(
    embedded, maintainer, annotator_a, annotator_b, adjudicator, settings
):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    data = plain({"weights.bin": os.urandom(1_300_000)})  # 1.3 MB that deflate cannot shrink
    token = do_issue_token(maintainer)[1]
    port, _ = embedded()
    key = upload_with_a_cut(port, token, data, f"filename {b64('model.zip')},kind {b64('bundle')}")
    request = json.dumps({"bundle_upload": key, "label": "resumed"}).encode()
    head = (
        f"POST /api/versions/{version.pk}/bundles/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(request)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head + request)
        response = read_response(sock, timeout=60)
    assert response.startswith(b"HTTP/1.1 202"), response[:300]
    run = BundleRun.objects.get(pk=json.loads(response.partition(b"\r\n\r\n")[2])["id"])
    assert run.label == "resumed" and bytes(run.bundle) == data
    assert run.bundle_sha256 == hashlib.sha256(data).hexdigest()
    assert ResumableUpload.objects.get(key=key).consumed_at is not None
