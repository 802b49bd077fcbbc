"""Annotate first: a browser-playable source is ready for annotation on its remux before
its proxy exists; the proxy follows (the real tasks, eager) on the same frame table.

The proxy task is queued after the remux commits; these tests hold the queued callbacks
(``django_capture_on_commit_callbacks``) to look at the video in between, then run them.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.files import File
from PIL import Image

from annotator.actions.ingest import do_ingest_video, file_sha256
from annotator.actions.ingest_steps import same_timing
from annotator.base.media import synthetic
from annotator.base.media.frametable import FrameTable
from annotator.models import AuditEntry, Job, Video
from tests.factories import client_for, make_packet

pytestmark = pytest.mark.django_db


def stored(source: Path, maintainer) -> tuple[Video, Job]:
    video = Video.objects.create(title=source.stem, original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    return video, Job.objects.create(kind="ingest", video=video, created_by=maintainer)


def tmp_entries() -> list[Path]:
    tmp = Path(settings.MEDIA_ROOT) / "tmp"
    return list(tmp.iterdir()) if tmp.exists() else []


def barcode_of_png(response) -> int | None:
    assert response.status_code == 200, response
    image = np.asarray(Image.open(io.BytesIO(response.content)).convert("RGB"))
    return synthetic.read_barcode(image)


def enqueued(callbacks) -> list:
    """The on-commit callbacks that send a task (not the audit anchor lines every write adds)."""
    return [callback for callback in callbacks if callback.__qualname__.startswith("enqueue_on_commit")]


def test_a_playable_source_is_annotatable_before_its_proxy_exists(
    synthetic_source,
    maintainer,
    annotator_a,
    annotator_b,
    adjudicator,
    eager_celery,
    django_capture_on_commit_callbacks,
):
    source = synthetic_source("h264-24-gop250")
    video, job = stored(source, maintainer)
    with django_capture_on_commit_callbacks() as queued:
        do_ingest_video(video, job, chunk_frames=48)
    video.refresh_from_db()
    job.refresh_from_db()
    # Ready on the remux: no proxy yet, the job still running, the proxy task queued.
    assert video.status == Video.Status.READY and video.error == ""
    assert video.remux and not video.proxy and video.remux_sha256 == file_sha256(video.remux.path)
    assert job.status == Job.Status.RUNNING and job.result["remux"]["sha256"] == video.remux_sha256
    queued = enqueued(queued)  # the audit log's anchor lines are callbacks too
    assert len(queued) == 1 and not tmp_entries()
    remux_table = FrameTable.load(video.frame_table.path)
    assert remux_table.frame_count == 300 and video.frame_count == 300
    # The early sprite is made of the remux's keyframes (GOP 250: frames 0 and 250).
    assert video.thumbnail_meta["frames"] == [0, 250] == [k for k in remux_table.keyframes if k < 300]
    assert AuditEntry.objects.filter(operation="video.remux", object_id=str(video.pk)).exists()

    # A packet can be made and its media served: the remux at its versioned URL, exact frames.
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title="early")
    client = client_for(annotator_a)
    base = f"/media/packets/{packet.pk}"
    listing = client.get(f"{base}/renditions.json").json()
    remux_url = f"{base}/remux/{video.remux_sha256[:16]}.mp4"
    assert listing == {
        "renditions": {"remux": remux_url, "proxy": None, "full": None},
        "ready_for_annotation": True,
        "proxy_ready": False,
    }
    ranged = client.get(remux_url, HTTP_RANGE="bytes=0-99")
    assert ranged.status_code == 206 and ranged["ETag"] == f'"{video.remux_sha256}"'
    assert client.get(f"{base}/remux/{'0' * 16}.mp4").status_code == 404  # another version: never other bytes
    assert client.get(f"{base}/proxy.mp4").status_code == 404
    for n in (0, 137, 299):  # B-frames, GOP 250: the exact-frame decoder seeks the remux
        assert barcode_of_png(client.get(f"{base}/frames/{n}.png")) == n

    with django_capture_on_commit_callbacks(execute=True):
        queued[0]()  # the proxy task: chunks, then the join
    video.refresh_from_db()
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.result["chunks"] == 7 and "remux" in job.result
    assert video.status == Video.Status.READY and video.proxy and video.remux
    proxy_table = FrameTable.load(video.frame_table.path)
    assert same_timing(remux_table, proxy_table) and proxy_table.keyframes == tuple(range(0, 300, 12))
    assert [i for _, i in synthetic.iter_decoded_indices(video.proxy.path)] == list(range(300))
    assert video.thumbnail_meta["count"] == 100 and video.thumbnail_meta["frames"][-1] == 299
    listing = client.get(f"{base}/renditions.json").json()
    assert listing["renditions"] == {
        "remux": remux_url,
        "proxy": f"{base}/proxy/{video.proxy_sha256[:16]}.mp4",
        "full": None,
    }
    assert client.get(remux_url, HTTP_RANGE="bytes=0-99").status_code == 206  # a playing remux stays
    assert barcode_of_png(client.get(f"{base}/frames/137.png")) == 137
    names = {p.relative_to(settings.MEDIA_ROOT).as_posix() for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()}
    assert names == {
        video.original.name,
        video.remux.name,
        video.proxy.name,
        video.frame_table.name,
        video.thumbnails.name,
    }


def test_a_source_the_browser_cannot_play_as_it_is_goes_proxy_first(
    synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks
):
    video, job = stored(synthetic_source("h264-rotated-90"), maintainer)
    with django_capture_on_commit_callbacks() as queued:
        do_ingest_video(video, job, chunk_frames=24)
    video.refresh_from_db()
    assert video.status == Video.Status.PROCESSING and not video.remux and not video.frame_table
    assert not client_for(maintainer).get(f"/api/videos/{video.pk}/").json()["ready_for_annotation"]
    with django_capture_on_commit_callbacks(execute=True):
        queued[0]()  # the chunk tasks
    video.refresh_from_db()
    assert video.status == Video.Status.READY and video.proxy and not video.remux
    detail = client_for(maintainer).get(f"/api/videos/{video.pk}/").json()
    assert (detail["ready_for_annotation"], detail["proxy_ready"]) == (True, True)
    assert detail["media"]["renditions"]["remux"] is None


def test_a_failed_proxy_leaves_the_video_annotatable_on_its_remux(
    synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks
):
    video, job = stored(synthetic_source("h264-2997-gop12"), maintainer)
    with django_capture_on_commit_callbacks() as queued:
        do_ingest_video(video, job, chunk_frames=48)
    os.unlink(video.original.path)  # the source disappears before the proxy is made
    enqueued(queued)[0]()
    video.refresh_from_db()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.message
    assert video.status == Video.Status.READY and video.error == job.message and not video.proxy
    assert Path(video.remux.path).is_file() and Path(video.frame_table.path).is_file()
    assert AuditEntry.objects.filter(operation="video.proxy_failed", object_id=str(video.pk)).exists()
    assert not tmp_entries()
    detail = client_for(maintainer).get(f"/api/videos/{video.pk}/").json()
    assert (detail["ready_for_annotation"], detail["proxy_ready"]) == (True, False)


def test_a_video_whose_proxy_is_being_made_cannot_be_deleted(
    synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks
):
    video, job = stored(synthetic_source("h264-2997-gop12"), maintainer)
    with django_capture_on_commit_callbacks():
        do_ingest_video(video, job, chunk_frames=48)
    response = client_for(maintainer).delete(f"/api/videos/{video.pk}/")
    assert response.status_code == 409 and Video.objects.filter(pk=video.pk).exists()


def test_ingest_can_be_told_to_go_proxy_first(synthetic_source, maintainer, settings):
    settings.FRAMELEDGER_INGEST_REMUX_FIRST = False
    video, job = stored(synthetic_source("h264-2997-gop12"), maintainer)
    do_ingest_video(video, job, chunk_frames=0)
    video.refresh_from_db()
    assert video.status == Video.Status.READY and video.proxy and not video.remux


def test_the_remux_is_dropped_once_the_proxy_has_replaced_it_for_the_keep_time(
    synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, eager_celery,
    django_capture_on_commit_callbacks, settings,
):  # fmt: skip
    """Item 4 of issue 27: media on disk about 2x the source, not original + remux + proxy."""
    from datetime import timedelta

    from django.utils import timezone

    from annotator.actions.remux_retention import do_drop_superseded_remuxes

    settings.FRAMELEDGER_REMUX_KEEP_SECONDS = 600
    video, job = stored(synthetic_source("h264-24-gop250"), maintainer)
    with django_capture_on_commit_callbacks(execute=True):
        do_ingest_video(video, job, chunk_frames=48)
    video.refresh_from_db()
    remux_path = Path(video.remux.path)
    assert video.proxy and remux_path.exists()
    assert do_drop_superseded_remuxes() == []  # the proxy is younger than the keep time
    with django_capture_on_commit_callbacks(execute=True):
        assert do_drop_superseded_remuxes(now=timezone.now() + timedelta(seconds=601)) == [video.pk]
    video.refresh_from_db()
    assert not video.remux and video.remux_sha256 == "" and not remux_path.exists()
    entry = AuditEntry.objects.get(operation="video.remux_dropped")
    assert entry.details["bytes"] > 0
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title="after")
    client = client_for(annotator_a)
    listing = client.get(f"/media/packets/{packet.pk}/renditions.json").json()
    assert listing["renditions"]["remux"] is None and listing["proxy_ready"]
    assert barcode_of_png(client.get(f"/media/packets/{packet.pk}/frames/137.png")) == 137
    settings.FRAMELEDGER_REMUX_KEEP_SECONDS = -1  # kept: nothing more to drop anyway
    assert do_drop_superseded_remuxes(now=timezone.now() + timedelta(days=1)) == []
