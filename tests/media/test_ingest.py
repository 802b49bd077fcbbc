"""Ingest as the worker runs it: every derived file, or a clean failure with nothing half-made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile

from annotator.actions.ingest import do_ingest_video, file_sha256
from annotator.base.media import synthetic
from annotator.base.media.frametable import FrameTable
from annotator.models import AuditEntry, Job, Video

pytestmark = pytest.mark.django_db


def media_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def stored_video(maintainer, name: str, content: bytes) -> tuple[Video, Job]:
    video = Video.objects.create(title=name, original_name=name, created_by=maintainer)
    video.original.save(name, ContentFile(content), save=True)
    return video, Job.objects.create(kind="ingest", video=video, created_by=maintainer)


def test_ingest_fills_the_video_and_finishes_the_job(synthetic_source, maintainer):
    source = synthetic_source("h264-offset-1.5s")
    video, job = stored_video(maintainer, "offset.mkv", source.read_bytes())
    do_ingest_video(video, job, remux_first=False)  # the proxy-first path

    video.refresh_from_db()
    job.refresh_from_db()
    assert video.status == Video.Status.READY and video.error == ""
    assert video.sha256 == file_sha256(source)
    assert (video.codec, video.width, video.height, video.rotation) == ("h264", 160, 96, 0)
    assert (video.frame_rate_num, video.frame_rate_den, video.frame_count) == (25, 1, 200)
    assert video.duration == pytest.approx(8.0)
    assert video.proxy_sha256 == file_sha256(video.proxy.path)
    table = FrameTable.load(video.frame_table.path)
    assert table.frame_count == 200 and table.pts[0] == 0
    assert video.thumbnail_meta["frames"][-1] == 199
    assert Path(video.thumbnails.path).is_file()
    assert (job.status, job.progress, job.message) == (Job.Status.DONE, 1.0, "Ready.")
    assert job.result["frame_count"] == 200 and job.result["source_start"] == 1.5
    entry = AuditEntry.objects.get(operation="video.ingest")
    assert entry.hashes["proxy_sha256"] == video.proxy_sha256
    assert entry.hashes["source_sha256"] == video.sha256
    assert not (Path(settings.MEDIA_ROOT) / "tmp").exists() or not any((Path(settings.MEDIA_ROOT) / "tmp").iterdir())


def test_ingest_reports_progress_on_the_job_row(synthetic_source, maintainer, monkeypatch):
    from django.db.models.query import QuerySet

    seen = []
    original_update = QuerySet.update

    def spy(queryset, **fields):
        if queryset.model is Job and "progress" in fields:
            seen.append(fields["progress"])
        return original_update(queryset, **fields)

    monkeypatch.setattr(QuerySet, "update", spy)
    video, job = stored_video(maintainer, "a.mp4", synthetic_source("h264-2997-gop12").read_bytes())
    do_ingest_video(video, job, remux_first=False)  # the proxy-first path
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0 and len(seen) >= 5


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"this is not a video at all" * 100, "not a readable video file"),
        (b"\x00\x00\x00\x18ftypmp42" + bytes(5000), "not a readable video file"),
    ],
)
def test_a_corrupt_file_fails_cleanly_leaving_nothing_half_made(maintainer, content, message):
    video, job = stored_video(maintainer, "broken.mp4", content)
    before = media_files()
    do_ingest_video(video, job)

    video.refresh_from_db()
    job.refresh_from_db()
    assert video.status == Video.Status.FAILED and message in video.error
    assert job.status == Job.Status.FAILED and job.message == video.error
    assert not video.proxy and not video.frame_table and not video.thumbnails and not video.proxy_sha256
    assert media_files() == before  # only the uploaded original, no derived or temporary file
    assert AuditEntry.objects.filter(operation="video.ingest_failed").count() == 1


def test_an_mp4_cut_before_its_index_fails_cleanly(synthetic_source, maintainer):
    data = synthetic_source("h264-2997-gop12").read_bytes()  # moov at the end (no faststart)
    video, job = stored_video(maintainer, "cut.mp4", data[: len(data) // 2])
    before = media_files()
    do_ingest_video(video, job)
    video.refresh_from_db()
    assert video.status == Video.Status.FAILED
    assert "not a readable video file" in video.error
    assert media_files() == before


def test_a_failure_after_the_proxy_removes_the_proxy(synthetic_source, maintainer, monkeypatch):
    def broken_thumbnails(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("annotator.actions.ingest.make_thumbnails", broken_thumbnails)
    video, job = stored_video(maintainer, "a.mp4", synthetic_source("h264-2997-gop12").read_bytes())
    before = media_files()
    with pytest.raises(OSError):
        do_ingest_video(video, job)
    video.refresh_from_db()
    assert video.status == Video.Status.FAILED and "disk full" in video.error
    assert media_files() == before


def test_missing_original_fails_with_a_message(maintainer):
    video = Video.objects.create(title="nothing", created_by=maintainer)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    do_ingest_video(video, job)
    video.refresh_from_db()
    assert video.status == Video.Status.FAILED and "missing" in video.error


def test_rotated_phone_clip_is_stored_with_its_rotation_and_an_upright_proxy(ingest):
    video = ingest("h264-rotated-90")
    assert (video.width, video.height, video.rotation) == (96, 160, 90)
    table = FrameTable.load(video.frame_table.path)
    from annotator.base.media.frames import FrameReader

    with FrameReader(video.proxy.path, table) as reader:
        frame = reader.frame(7)
    assert synthetic.read_barcode(frame.to_ndarray(format="rgb24")) == 7


def test_frame_table_file_is_the_json_the_player_reads(ingest):
    video = ingest("h264-2997-gop12")
    data = json.loads(Path(video.frame_table.path).read_text())
    assert {"fps_num", "fps_den", "frame_count", "pts_start", "pts_deltas", "keyframes_deltas", "time_base"} <= set(
        data
    )
    assert (data["fps_num"], data["fps_den"], data["version"]) == (30000, 1001, 2)
    # Constant rate: one run of 1001 ticks (1/30000 s) per frame; a keyframe every 12.
    assert (data["pts_start"], data["pts_deltas"], data["time_base"]) == (0, [[1001, 239]], [1, 30000])
    assert (data["keyframes_start"], data["keyframes_deltas"]) == (0, [[12, 19]])
