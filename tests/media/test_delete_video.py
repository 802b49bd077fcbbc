"""Deleting failed and unused videos: maintainers only, audited, every file removed."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.test import Client

from annotator.actions.ingest import do_ingest_video
from annotator.entry.tasks import ingest_video
from annotator.models import AuditEntry, Job, Video

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def media_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def failed_upload(maintainer) -> Video:
    video = Video.objects.create(title="noise", original_name="noise.mp4", created_by=maintainer)
    video.original.save("noise.mp4", ContentFile(b"not a video at all" * 100), save=True)
    do_ingest_video(video, Job.objects.create(kind="ingest", video=video, created_by=maintainer))
    assert video.status == Video.Status.FAILED
    return video


def test_a_failed_upload_is_deleted_with_its_original_and_audited(maintainer, django_capture_on_commit_callbacks):
    video = failed_upload(maintainer)
    original = video.original.name
    assert media_files() == [original]
    with django_capture_on_commit_callbacks(execute=True):
        response = client_of(maintainer).delete(f"/api/videos/{video.pk}/")
    assert response.status_code == 204
    assert not Video.objects.filter(pk=video.pk).exists() and not Job.objects.filter(video_id=video.pk).exists()
    assert media_files() == []
    entry = AuditEntry.objects.get(operation="video.delete")
    assert (entry.object_id, entry.actor) == (str(video.pk), maintainer)
    assert entry.details["files"] == [original] and entry.details["status"] == "failed"
    assert "not a readable video file" in entry.details["error"]


def test_an_unused_ready_video_loses_every_derived_file_and_ingest_leftovers(
    ingest, maintainer, django_capture_on_commit_callbacks
):
    video = ingest("h264-2997-gop12")
    leftover = Path(settings.MEDIA_ROOT) / "tmp" / f"ingest-{video.pk}-0123456789ab" / "chunks" / "00000.part"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"a killed worker's half chunk")
    names = [video.original.name, video.proxy.name, video.frame_table.name, video.thumbnails.name]
    assert all(name in media_files() for name in names)
    with django_capture_on_commit_callbacks(execute=True):
        assert client_of(maintainer).delete(f"/api/videos/{video.pk}/").status_code == 204
    assert media_files() == []
    assert AuditEntry.objects.get(operation="video.delete").hashes["proxy_sha256"] == video.proxy_sha256


def test_a_video_a_packet_uses_is_refused_and_kept(media_packet, maintainer, django_capture_on_commit_callbacks):
    packet = media_packet("h264-2997-gop12")
    before = media_files()
    with django_capture_on_commit_callbacks(execute=True):
        response = client_of(maintainer).delete(f"/api/videos/{packet.video_id}/")
    assert response.status_code == 409
    assert f"packet(s) {packet.pk}" in response.json()["error"]["message"]
    assert Video.objects.filter(pk=packet.video_id).exists() and media_files() == before
    assert not AuditEntry.objects.filter(operation="video.delete").exists()


def test_a_video_being_ingested_is_refused(maintainer):
    video = Video.objects.create(title="busy", status=Video.Status.PROCESSING, created_by=maintainer)
    response = client_of(maintainer).delete(f"/api/videos/{video.pk}/")
    assert response.status_code == 409 and "being ingested" in response.json()["error"]["message"]
    assert Video.objects.filter(pk=video.pk).exists()


@pytest.mark.parametrize("who", ["annotator_a", "adjudicator", "outsider", None])
def test_everyone_but_maintainers_gets_404_and_nothing_changes(request, maintainer, who):
    video = failed_upload(maintainer)
    user = request.getfixturevalue(who) if who else None
    # Signed-out requests stop at DRF authentication (401/403), as for every video endpoint.
    expected = {401, 403} if user is None else {404}
    assert client_of(user).delete(f"/api/videos/{video.pk}/").status_code in expected
    assert Video.objects.filter(pk=video.pk).exists() and Path(video.original.path).is_file()


def test_an_ingest_queued_for_a_deleted_video_does_nothing(maintainer, django_capture_on_commit_callbacks):
    video = failed_upload(maintainer)
    job = video.jobs.get()
    with django_capture_on_commit_callbacks(execute=True):
        client_of(maintainer).delete(f"/api/videos/{video.pk}/")
    ingest_video(video.pk, job.pk)  # the message a broker delivers late: no error, nothing made
    assert media_files() == []
