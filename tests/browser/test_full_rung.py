"""The "Full resolution" button in Chromium: the player asks for the full-height rung,
waits while it is encoded, switches to it on the same frame, stays exact on it, and
switches back (docs/media.md §4.1)."""

from __future__ import annotations

import random

import pytest
from django.core.files import File

from annotator.actions.ingest import do_ingest_video
from annotator.base import queue
from annotator.base.media import synthetic
from annotator.entry import tasks
from annotator.models import Job, Video
from tests.browser.test_player import SEEK_BATCH_JS, STEP_RUN_JS, failures
from tests.factories import make_packet
from tests.media.conftest import FIXTURE_CHUNK_FRAMES, eager_celery  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FRAMES = 120
SHOWN_JS = """
(boxes) => {
  const p = window.frameledger.player;
  return { current: p.currentFrame, presented: p.presentedFrame, means: window.__flReadCells(boxes),
           rendition: p.rendition, src: p.src, height: p.video.videoHeight, switches: p.stats.switches };
}
"""

# The switch is over (its promise settled: the frame is sought and confirmed on the new source).
SWITCHED_TO = "(r) => window.frameledger.player.rendition === r && !window.frameledger.player.renditions.switching"


@pytest.mark.usefixtures("eager_celery")
def test_the_full_resolution_button_switches_to_the_full_rung_on_the_same_frame(
    page_as, tmp_path, maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    held = []  # the broker, for the full rung only: the test runs that task itself
    real_send = queue.send
    monkeypatch.setattr(
        queue,
        "send",
        lambda name, args, **options: held.append(args) if name == queue.INGEST_FULL else real_send(name, args),
    )
    source = synthetic.write_video(
        tmp_path / "tall.mp4", "h264-2997-gop12", FRAMES, width=1152, height=768, textured=True
    )
    video = Video.objects.create(title="tall", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    do_ingest_video(video, job, chunk_frames=FIXTURE_CHUNK_FRAMES)  # remux, then the chunked proxy
    video.refresh_from_db()
    assert video.proxy and Job.objects.get(pk=job.pk).result["chunks"] == 3
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title="tall")
    proxy_boxes, full_boxes = synthetic.cell_boxes(1080, 720), synthetic.cell_boxes(1152, 768)

    page = page_as(annotator_b, f"/packets/{packet.pk}/player/")
    page.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    assert page.evaluate("window.frameledger.loadError || null") is None
    button = page.locator("button[data-act=full]")
    button.wait_for(state="visible")
    assert button.inner_text() == "Full resolution (768p)"
    assert page.evaluate("window.frameledger.player.rendition") == "proxy"
    assert failures(page.evaluate(SEEK_BATCH_JS, {"targets": [0, 77], "boxes": proxy_boxes})) == []

    button.click()
    page.wait_for_function("() => document.querySelector('button[data-act=full]').textContent.includes('encoding')")
    assert len(held) == 1
    tasks.ingest_full(*held[0])  # the worker encodes the full rung
    video.refresh_from_db()
    assert video.full
    page.wait_for_function(SWITCHED_TO, arg="full", timeout=30000)
    shown = page.evaluate(SHOWN_JS, full_boxes)
    assert shown["height"] == 768 and shown["switches"] == 1
    assert shown["src"].endswith(f"/full/{video.full_sha256[:16]}.mp4")
    assert synthetic.decode_cell_means(shown["means"]) == shown["current"] == shown["presented"] == 77
    page.wait_for_function("() => document.querySelector('button[data-act=full]').textContent === '720p proxy'")

    rng = random.Random("full-rung")
    targets = [0, 1, FRAMES - 2, FRAMES - 1] + [rng.randrange(FRAMES) for _ in range(40)] + [58]
    results = page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": full_boxes})
    results += page.evaluate(STEP_RUN_JS, {"start": 58, "steps": [1] * 10 + [-1] * 10, "boxes": full_boxes})
    assert failures(results) == []

    # And back to the 720-line proxy, on the frame it was on.
    button.click()
    page.wait_for_function(SWITCHED_TO, arg="proxy", timeout=30000)
    shown = page.evaluate(SHOWN_JS, proxy_boxes)
    assert shown["height"] == 720 and shown["switches"] == 2
    assert synthetic.decode_cell_means(shown["means"]) == shown["current"] == shown["presented"] == 58
    page.wait_for_function(
        "() => document.querySelector('button[data-act=full]').textContent === 'Full resolution (768p)'"
    )
