"""The maintainer's upload page: the ingest report of a recording with undecodable
frames, and deleting a failed upload. Real Chromium, real app; the Celery tasks run
inline in the server (eager), so an upload's answer arrives after its ingest."""

from __future__ import annotations

import pytest

from annotator.models import AuditEntry, Video
from tests.browser.ledger_pages import wait_ready
from tests.media.conftest import OPEN_GOP_CUT, TS_RESTART

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SERVER = "uvicorn"  # the embedded default's server (tests/browser/conftest.py)


def upload(page, title: str, path) -> None:
    page.fill("#video-title", title)
    page.set_input_files("#video-file", str(path))
    page.click("#upload")


def test_the_page_shows_which_frames_ingest_dropped(page_as, maintainer, synthetic_source, eager_celery):
    page = page_as(maintainer, "/maintainer/packets/new/")
    wait_ready(page)
    upload(page, "broadcast cut", synthetic_source(OPEN_GOP_CUT))
    page.wait_for_selector("#step-ingest[data-status=done]", timeout=60000)
    # The report is filled from the video's own record, fetched after the job says done.
    page.wait_for_function("() => document.querySelector('#ingest-report').textContent !== ''", timeout=30000)
    video = Video.objects.get()
    report = page.inner_text("#ingest-report")
    assert f"2 of {video.frame_count + 2} source frames no decoder can produce were dropped" in report
    first = video.ingest_report["dropped"][0]
    assert f"0 ({first['seconds']:.3f} s), 1 (" in report


def test_the_page_says_what_the_decoded_order_repaired_and_why_there_is_no_remux(
    page_as, maintainer, synthetic_source, eager_celery
):
    # Refused before ("two frames share the presentation timestamp …"): now ingested, and said.
    page = page_as(maintainer, "/maintainer/packets/new/")
    wait_ready(page)
    upload(page, "dvb recording", synthetic_source(TS_RESTART))
    page.wait_for_selector("#step-ingest[data-status=done]", timeout=60000)
    page.wait_for_function("() => document.querySelector('#ingest-report').textContent !== ''", timeout=30000)
    report = page.inner_text("#ingest-report")
    assert "timestamps could not time the frames (the timestamps restart at video packet 70" in report
    assert "1 frame's timestamps restarted, first at frames 70 (2.880 s)" in report
    remux = page.inner_text('#ingest-steps [data-step="remux"]')
    assert "the decoder does not honour the container's timestamps" in remux
    assert Video.objects.get().frame_count == 120


def test_a_failed_upload_can_be_deleted_from_the_page(page_as, maintainer, tmp_path, eager_celery):
    noise = tmp_path / "noise.mp4"
    noise.write_bytes(b"this is not a video" * 500)
    page = page_as(maintainer, "/maintainer/packets/new/")
    wait_ready(page)
    upload(page, "noise", noise)
    page.wait_for_selector("#delete-upload:not([hidden])", timeout=60000)
    assert "not a readable video file" in page.inner_text("#upload-error")
    video = Video.objects.get()
    page.click("#delete-upload")
    page.wait_for_function("() => document.querySelector('#ingest-message').textContent.includes('deleted')")
    assert not Video.objects.exists()
    assert AuditEntry.objects.get(operation="video.delete").object_id == str(video.pk)


def test_the_page_resumes_a_dropped_upload_and_shows_each_server_step(
    page_as, maintainer, synthetic_source, eager_celery
):
    """Items 4 and 5 of issue 27: the upload goes in tus pieces; one piece's connection is
    dropped and the page goes on from the server's offset; the steps show real figures."""
    import hashlib

    source = synthetic_source("h264-24-gop250")
    data = source.read_bytes()
    page = page_as(maintainer, "/maintainer/packets/new/")
    wait_ready(page)
    page.evaluate(f"window.frameledger.uploadPieceBytes = {len(data) // 4 + 1}")
    dropped = []

    def drop_one(route, request):
        if request.method == "PATCH" and request.headers.get("upload-offset") != "0" and not dropped:
            dropped.append(request.headers["upload-offset"])
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/api/uploads/*/", drop_one)
    assert page.eval_on_selector("#task-kind-select", "s => s.value") == ""  # no default kind
    upload(page, "resumed", source)
    page.wait_for_selector("#step-ingest[data-status=done]", timeout=60000)
    # Steps the page did not see happen are filled from the video once it has been fetched.
    page.wait_for_function(
        "() => [...document.querySelectorAll('#ingest-steps li')].every((i) => i.dataset.state === 'done')",
        timeout=30000,
    )
    assert dropped, "no piece was dropped"
    video = Video.objects.get()
    assert video.sha256 == hashlib.sha256(data).hexdigest()
    steps = {
        name: page.inner_text(f'#ingest-steps [data-step="{name}"]')
        for name in ("stored", "hashed", "probed", "remux", "annotatable", "proxy")
    }
    states = page.eval_on_selector_all("#ingest-steps li", "items => items.map((i) => i.dataset.state)")
    assert states == ["done"] * 6
    assert f"{len(data) / 1e6:.1f} MB" in steps["stored"] and "resumed" in steps["stored"]
    assert video.sha256[:16] in steps["hashed"]
    assert f"{video.frame_count:,} frames" in steps["probed"]
    assert video.remux_sha256[:16] in steps["remux"]
    assert "100 %" in steps["proxy"]
