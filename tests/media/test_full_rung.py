"""The ladder's on-demand rung: ``/api/packets/<id>/renditions/full/`` and the
``annotator.ingest_full`` task (real ingest, real encode, tasks run eagerly)."""

from __future__ import annotations

import pytest
from django.core.files import File

from annotator.actions.ingest import do_ingest_video
from annotator.base.media import synthetic
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.probe import probe
from annotator.models import AuditEntry, Job, Video
from tests.factories import client_for, make_packet

FRAMES = 60


@pytest.fixture
def tall_video(tmp_path, maintainer, eager_celery, django_capture_on_commit_callbacks):
    """A ready video whose source (1152x768, textured, ~realistic bit rate) is taller than
    the 720-line proxy."""

    def make(width=1152, height=768, frames=FRAMES):
        source = synthetic.write_video(
            tmp_path / f"tall-{height}.mp4", "h264-2997-gop12", frames, width=width, height=height, textured=True
        )
        video = Video.objects.create(title=f"tall {height}", original_name=source.name, created_by=maintainer)
        with open(source, "rb") as fh:
            video.original.save(source.name, File(fh), save=True)
        job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
        with django_capture_on_commit_callbacks(execute=True):
            do_ingest_video(video, job, chunk_frames=0)
        video.refresh_from_db()
        assert video.status == Video.Status.READY and video.proxy, video.error
        return video, source

    return make


def _url(packet) -> str:
    return f"/api/packets/{packet.pk}/renditions/full/"


@pytest.mark.slow
@pytest.mark.django_db
def test_a_participant_asks_for_the_full_rung_and_gets_the_same_frames_at_full_height(
    tall_video, maintainer, annotator_a, annotator_b, adjudicator, outsider, django_capture_on_commit_callbacks
):
    video, source = tall_video()
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video)
    assert video_height(video.proxy.path) == 720
    state = client_for(annotator_a).get(_url(packet)).json()
    assert state == {
        "status": "none",
        "height": 768,
        "proxy_height": 720,
        "progress": None,
        "message": "",
        "url": None,
    }
    # Outsiders cannot see it or ask for it: the answer a missing packet gets.
    assert client_for(outsider).get(_url(packet)).status_code == 404
    assert client_for(outsider).post(_url(packet)).status_code == 404
    assert not Job.objects.filter(kind="full_rendition").exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(annotator_b).post(_url(packet))
        assert response.status_code == 202, response.content
        assert response.json()["status"] == "queued"
        # Asking again while it is queued queues nothing more.
        assert client_for(adjudicator).post(_url(packet)).status_code == 202
    assert Job.objects.filter(kind="full_rendition").count() == 1

    state = client_for(annotator_a).get(_url(packet)).json()
    video.refresh_from_db()
    url = f"/media/packets/{packet.pk}/full/{video.full_sha256[:16]}.mp4"
    assert (state["status"], state["progress"], state["url"]) == ("ready", 1.0, url)
    assert "annotator_b" not in str(state)  # never says who asked
    # Served like the other renditions: versioned, by range, to anyone on the packet.
    response = client_for(annotator_a).get(url, HTTP_RANGE="bytes=0-99")
    assert response.status_code == 206 and response["ETag"] == f'"{video.full_sha256}"'
    assert client_for(outsider).get(url).status_code == 404
    renditions = client_for(adjudicator).get(f"/media/packets/{packet.pk}/renditions.json").json()["renditions"]
    assert renditions["full"] == url and renditions["proxy"]

    # The same frames, at the source's own height, timed exactly as the frame table.
    assert video_height(video.full.path) == 768
    full_table = build_frame_table(video.full.path)
    table = FrameTable.load(video.frame_table.path)
    assert (full_table.pts, full_table.end, full_table.keyframes) == (table.pts, table.end, table.keyframes)
    assert [i for _, i in synthetic.iter_decoded_indices(video.full.path)] == list(range(FRAMES))
    # Bit rate never above the source's.
    duration = float(table.duration)
    full_bps = video.full.size * 8 / duration
    assert full_bps <= probe(source).bit_rate * 1.02, (full_bps, probe(source).bit_rate)

    # Asking once it exists: 200, nothing queued.
    response = client_for(annotator_a).post(_url(packet))
    assert response.status_code == 200 and response.json()["url"] == url
    assert Job.objects.filter(kind="full_rendition").count() == 1
    # Annotator B's request and the adjudicator joining it while queued (one job for both).
    asked = AuditEntry.objects.filter(operation="video.full_requested").order_by("seq")
    assert [e.actor.username for e in asked] == ["annotator_b", "adjudicator"]
    assert len({e.details["job"] for e in asked}) == 1
    assert AuditEntry.objects.filter(operation="video.full_rendition").count() == 1


@pytest.mark.django_db
def test_a_source_no_taller_than_the_proxy_needs_no_full_rung(
    ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    video = ingest("h264-2997-gop12", chunk_frames=0)  # 160x96
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video)
    assert client_for(annotator_a).get(_url(packet)).json()["status"] == "not_needed"
    response = client_for(annotator_a).post(_url(packet))
    assert response.status_code == 409 and "96 lines" in response.json()["error"]["message"]
    assert not Job.objects.filter(kind="full_rendition").exists()


@pytest.mark.django_db
def test_a_video_without_media_has_no_full_rung_yet(maintainer, annotator_a, annotator_b, adjudicator):
    video = Video.objects.create(
        title="no media", width=1920, height=1080, status=Video.Status.READY, created_by=maintainer
    )
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video)
    assert client_for(adjudicator).get(_url(packet)).json()["status"] == "unavailable"
    assert client_for(adjudicator).post(_url(packet)).status_code == 409


@pytest.mark.slow
@pytest.mark.django_db
def test_a_failed_full_encode_is_reported_and_can_be_asked_for_again(
    tall_video, maintainer, annotator_a, annotator_b, adjudicator, django_capture_on_commit_callbacks
):
    video, _source = tall_video(frames=24)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video)
    original = video.original.path
    with open(original, "r+b") as fh:  # the original damaged after ingest
        fh.truncate(2000)
    with django_capture_on_commit_callbacks(execute=True):
        assert client_for(annotator_a).post(_url(packet)).status_code == 202
    state = client_for(annotator_a).get(_url(packet)).json()
    assert state["status"] == "failed" and state["message"] and state["url"] is None
    video.refresh_from_db()
    assert not video.full and video.status == Video.Status.READY  # the video itself is untouched
    assert AuditEntry.objects.filter(operation="video.full_failed").count() == 1
    with django_capture_on_commit_callbacks(execute=False):
        assert client_for(annotator_a).post(_url(packet)).status_code == 202
    assert Job.objects.filter(kind="full_rendition").count() == 2


def video_height(path) -> int:
    import av

    with av.open(str(path)) as container:
        return container.streams.video[0].codec_context.height


@pytest.mark.django_db
def test_the_full_rung_status_and_audit_never_show_the_other_annotators_request(
    maintainer, annotator_a, annotator_b, adjudicator, django_capture_on_commit_callbacks
):
    from tests.factories import make_user

    video = Video.objects.create(
        title="tall", width=1920, height=1080, status=Video.Status.READY, frame_table="videos/frames/x.json",
        created_by=maintainer,
    )  # fmt: skip
    annotating_maintainer = make_user("maintainer_b", maintainer=True)
    packet = make_packet(maintainer, annotator_a, annotating_maintainer, adjudicator, video=video)
    with django_capture_on_commit_callbacks(execute=False):  # queued, never encoded here
        assert client_for(annotator_a).post(_url(packet)).status_code == 202
    assert client_for(annotator_a).get(_url(packet)).json()["status"] == "queued"  # A asked: A sees it
    other = client_for(annotating_maintainer)
    assert other.get(_url(packet)).json() | {"url": None} == {
        "status": "none", "height": 1080, "proxy_height": 720, "progress": None, "message": "", "url": None,
    }  # fmt: skip
    assert client_for(adjudicator).get(_url(packet)).json()["status"] == "queued"  # staff see progress
    # The maintainer who annotates B does not see A's request in the audit view across packets.
    from annotator.reads.access import visible_audit_entries

    assert "video.full_requested" not in other.get("/audit/").content.decode()
    assert not visible_audit_entries(annotating_maintainer).filter(operation="video.full_requested").exists()
    assert "video.full_requested" in client_for(maintainer).get("/audit/").content.decode()
    # B asking joins the queued request (no second job) and from then on sees it.
    with django_capture_on_commit_callbacks(execute=False):
        assert other.post(_url(packet)).status_code == 202
    assert other.get(_url(packet)).json()["status"] == "queued"
    assert Job.objects.filter(kind="full_rendition").count() == 1
