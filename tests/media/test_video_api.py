"""Maintainers upload a video (202 + job), follow the job, read the video."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base import queue
from annotator.entry import tasks
from annotator.models import AuditEntry, Job, Video
from tests.factories import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """Records what would go to the broker; the test runs the task body itself."""
    calls = []
    monkeypatch.setattr(queue, "send", lambda name, args: calls.append((name, *args)))
    return calls


def upload(client, content: bytes, *, title="Match", name="match.mp4"):
    return client.post("/api/videos/", {"file": SimpleUploadedFile(name, content), "title": title}, format="multipart")


def test_upload_answers_202_and_queues_ingest_after_commit(
    maintainer, synthetic_source, enqueued, django_capture_on_commit_callbacks
):
    client = client_for(maintainer)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, synthetic_source("h264-24-gop250").read_bytes())
    assert response.status_code == 202
    video_id, job_id = response.data["video"]["id"], response.data["job"]["id"]
    assert response.data["video"]["status"] == "pending"
    assert response.data["job"]["status"] == "queued"
    assert enqueued == [(queue.INGEST_VIDEO, video_id, job_id)]
    video = Video.objects.get(pk=video_id)
    assert video.original_name == "match.mp4" and video.size_bytes > 0 and video.original.name.endswith(".mp4")
    assert AuditEntry.objects.filter(operation="video.upload", object_id=str(video_id)).exists()

    with django_capture_on_commit_callbacks(execute=True):
        tasks.ingest_video(video_id, job_id)  # what the worker runs: the remux first
    assert enqueued[-1] == (queue.INGEST_PROXY, video_id, job_id, None)  # the proxy task, queued

    job = client.get(f"/api/jobs/{job_id}/").data
    assert job["status"] == "running" and "remux" in job["result"]
    detail = client.get(f"/api/videos/{video_id}/").data
    assert detail["status"] == "ready" and detail["frame_count"] == 300 and detail["frame_rate"] == [24, 1]
    assert (detail["ready_for_annotation"], detail["proxy_ready"]) == (True, False)
    remux_url = f"/media/videos/{video_id}/remux/{detail['remux_sha256'][:16]}.mp4"
    assert detail["media"]["renditions"] == {"remux": remux_url, "proxy": None, "full": None}

    tasks.ingest_proxy(video_id, job_id)  # what the worker runs next: the proxy

    job = client.get(f"/api/jobs/{job_id}/").data
    assert (job["status"], job["progress"], job["video"]) == ("done", 1.0, video_id)
    detail = client.get(f"/api/videos/{video_id}/").data
    assert (detail["ready_for_annotation"], detail["proxy_ready"]) == (True, True)
    proxy_url = f"/media/videos/{video_id}/proxy/{detail['proxy_sha256'][:16]}.mp4"
    assert detail["media"]["renditions"] == {"remux": remux_url, "proxy": proxy_url, "full": None}
    assert detail["media"]["proxy"] == f"/media/videos/{video_id}/proxy.mp4"
    assert detail["job"]["id"] == job_id
    assert [v["id"] for v in client.get("/api/videos/").data] == [video_id]


def test_nothing_is_queued_when_the_request_fails_inside_its_transaction(maintainer, enqueued):
    response = upload(client_for(maintainer), b"", title="empty")
    assert response.status_code == 400
    assert enqueued == [] and not Video.objects.exists() and not Job.objects.exists()


def test_a_corrupt_upload_is_accepted_then_the_job_says_why_it_failed(maintainer, enqueued):
    client = client_for(maintainer)
    response = upload(client, b"garbage" * 500, name="x.mov")
    tasks.ingest_video(response.data["video"]["id"], response.data["job"]["id"])
    job = client.get(f"/api/jobs/{response.data['job']['id']}/").data
    assert job["status"] == "failed" and "not a readable video file" in job["message"]
    video = client.get(f"/api/videos/{response.data['video']['id']}/").data
    assert video["status"] == "failed" and video["error"] == job["message"] and video["media"] is None


def test_upload_needs_a_title_and_a_file(maintainer, enqueued):
    client = client_for(maintainer)
    no_title = upload(client, b"x" * 10, title="  ")
    assert no_title.status_code == 400 and no_title.data["error"]["field"] == "title"
    no_file = client.post("/api/videos/", {"title": "t"}, format="multipart")
    assert no_file.status_code == 400 and no_file.data["error"]["field"] == "file"


def test_upload_over_the_size_limit_is_refused(maintainer, enqueued, settings):
    settings.FRAMELEDGER_MAX_VIDEO_BYTES = 100
    response = upload(client_for(maintainer), b"x" * 101)
    assert response.status_code == 400 and "limit" in response.data["error"]["message"]


@pytest.mark.parametrize("who", ["annotator_a", "outsider", "anonymous"])
def test_videos_and_jobs_are_hidden_from_everyone_but_maintainers(request, who, maintainer, enqueued):
    response = upload(client_for(maintainer), b"garbage" * 10)
    video_id, job_id = response.data["video"]["id"], response.data["job"]["id"]
    user = None if who == "anonymous" else request.getfixturevalue(who)
    client = client_for(user)
    # Signed-out requests stop at DRF authentication (403 with session auth first).
    expected = {401, 403} if user is None else {404}
    assert client.get(f"/api/videos/{video_id}/").status_code in expected
    assert client.get(f"/api/jobs/{job_id}/").status_code in expected
    assert client.get("/api/videos/").status_code in expected
    assert upload(client, b"garbage" * 10).status_code in expected
    assert Video.objects.count() == 1


def test_unknown_job_is_404(maintainer):
    assert client_for(maintainer).get("/api/jobs/999999/").status_code == 404
