"""The faststart remux (stream copy, no encode) of browser-playable sources, in Chromium.

These tests establish that the remux is frame-exact by the player's own checks, B-frame
sources (MP4 edit lists) included, and that a player on the remux switches to the proxy
when ingest has made it (annotate first, docs/media.md §2.4), still exact.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from annotator.actions.ingest import file_sha256
from annotator.base import queue
from annotator.base.media import synthetic
from annotator.base.media.probe import probe
from annotator.base.media.remux import make_remux, not_browser_playable
from annotator.base.media.thumbs import make_thumbnails
from annotator.entry import tasks
from annotator.models import Job, Video
from tests.browser.test_player import BOXES, SEEK_BATCH_JS, STEP_RUN_JS, failures
from tests.factories import make_packet
from tests.media.conftest import eager_celery  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SERVER = "uvicorn"  # the embedded default's server (tests/browser/conftest.py)

REMUXED = ("h264-24-gop250", "h264-2997-gop12", "vp9-webm", "h264-offset-1.5s")


def remux_video(source: Path, maintainer, *, checked: bool = True) -> Video:
    """A ready video whose only rendition is the remux of ``source`` (``checked=False``: made
    even where probe refuses it, to measure what Chromium does with it)."""
    probed = probe(source)
    assert not checked or not_browser_playable(source, probed) is None
    folder = Path(settings.MEDIA_ROOT) / "videos" / "remux"
    folder.mkdir(parents=True, exist_ok=True)
    stem = source.stem
    table = make_remux(source, folder / f"{stem}.mp4", probed)
    (folder / f"{stem}.json").write_text(table.dumps())
    # A refused remux may decode from its first keyframe only.
    indices = None if checked else [table.keyframes[0] if table.keyframes else 0]
    meta = make_thumbnails(folder / f"{stem}.mp4", table, folder / f"{stem}.jpg", indices=indices)
    original = Path(settings.MEDIA_ROOT) / "videos" / "original" / source.name
    original.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, original)
    return Video.objects.create(
        title=f"remux {stem}",
        status=Video.Status.READY,
        original=f"videos/original/{source.name}",
        codec=probed.codec,
        width=probed.width,
        height=probed.height,
        frame_rate_num=probed.rate.numerator,
        frame_rate_den=probed.rate.denominator,
        frame_count=table.frame_count,
        duration=probed.duration,
        proxy=f"videos/remux/{stem}.mp4",
        proxy_sha256=file_sha256(folder / f"{stem}.mp4"),
        frame_table=f"videos/remux/{stem}.json",
        thumbnails=f"videos/remux/{stem}.jpg",
        thumbnail_meta=meta,
        created_by=maintainer,
    )


@pytest.mark.parametrize("name", REMUXED)
def test_the_remux_shows_exactly_the_requested_frame(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, name
):
    video = remux_video(synthetic_source(name), maintainer)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title=name)
    page = page_as(annotator_a, f"/packets/{packet.pk}/player/")
    page.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    assert page.evaluate("window.frameledger.loadError || null") is None
    count = video.frame_count
    rng = random.Random(f"{name}-remux")
    targets = [0, 1, count - 2, count - 1] + [rng.randrange(count) for _ in range(100)]
    results = page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": BOXES})
    results += page.evaluate(STEP_RUN_JS, {"start": count // 2, "steps": [1] * 20 + [-1] * 20, "boxes": BOXES})
    assert failures(results) == []


def test_sources_the_browser_cannot_take_as_they_are_are_not_remuxed(synthetic_source):
    from tests.media.conftest import OPEN_GOP_CUT

    rotated = synthetic_source("h264-rotated-90")
    assert "rotation" in not_browser_playable(rotated, probe(rotated))
    avi = synthetic_source("h264-avi-bframes")
    assert "timestamps" in not_browser_playable(avi, probe(avi))
    cut = synthetic_source(OPEN_GOP_CUT)
    assert "timestamps" in not_browser_playable(cut, probe(cut))
    vfr = synthetic_source("h264-vfr-bframes")
    assert "variable frame rate with reordered" in not_browser_playable(vfr, probe(vfr))


SHOWN_JS = """
(boxes) => {
  const player = window.frameledger.player;
  return { current: player.currentFrame, presented: player.presentedFrame, means: window.__flReadCells(boxes),
           rendition: player.rendition, src: player.src, switches: player.stats.switches };
}
"""


def remux_first_packet(monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator):
    """A packet whose video is ready on its remux, its proxy task held back: (video, packet,
    job, the held proxy task's arguments)."""
    from django.core.files import File

    from annotator.actions.ingest import do_ingest_video
    from tests.media.conftest import FIXTURE_CHUNK_FRAMES

    queued = []  # the broker: the proxy task is held here until the test runs it
    real_send = queue.send

    def send(name, args, **options):
        queued.append(args) if name == queue.INGEST_PROXY else real_send(name, args, **options)

    monkeypatch.setattr(queue, "send", send)
    source = synthetic_source("h264-24-gop250")
    video = Video.objects.create(title="annotate first", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    do_ingest_video(video, job, chunk_frames=FIXTURE_CHUNK_FRAMES)
    video.refresh_from_db()
    assert video.status == Video.Status.READY and video.remux and not video.proxy and len(queued) == 1
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title="annotate first")
    return video, packet, job, queued[0]


@pytest.mark.usefixtures("eager_celery")
def test_the_player_starts_on_the_remux_and_switches_to_the_proxy_keeping_the_frame(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    video, packet, job, held = remux_first_packet(
        monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator
    )

    page = page_as(annotator_a, f"/packets/{packet.pk}/player/")
    page.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    assert page.evaluate("window.frameledger.loadError || null") is None
    assert page.evaluate("window.frameledger.player.rendition") == "remux"
    assert page.evaluate("window.frameledger.player.checkRenditions()") is False  # no proxy yet
    count = video.frame_count
    rng = random.Random("annotate-first")
    targets = [0, count - 1] + [rng.randrange(count) for _ in range(40)] + [137]
    assert failures(page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": BOXES})) == []

    tasks.ingest_proxy(*held)  # the worker makes the proxy (chunks and join, eager)
    video.refresh_from_db()
    assert video.proxy and Job.objects.get(pk=job.pk).status == Job.Status.DONE

    assert page.evaluate("window.frameledger.player.checkRenditions()") is True
    shown = page.evaluate(SHOWN_JS, BOXES)
    assert shown["rendition"] == "proxy" and shown["switches"] == 1
    assert shown["src"].endswith(f"/proxy/{video.proxy_sha256[:16]}.mp4")
    assert synthetic.decode_cell_means(shown["means"]) == shown["current"] == shown["presented"] == 137
    targets = [0, 1, count - 2, count - 1] + [rng.randrange(count) for _ in range(60)]
    results = page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": BOXES})
    results += page.evaluate(STEP_RUN_JS, {"start": count // 2, "steps": [1] * 15 + [-1] * 15, "boxes": BOXES})
    assert failures(results) == []


def player_with_the_proxy_just_made(
    page_as, monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator
):
    """Annotator A's player page opened on the remux, then the proxy made (the player has not
    switched yet: its next check of the renditions does)."""
    _video, packet, _job, held = remux_first_packet(
        monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator
    )
    page = page_as(annotator_a, f"/packets/{packet.pk}/player/")
    page.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    tasks.ingest_proxy(*held)
    return page


@pytest.mark.usefixtures("eager_celery")
def test_playback_asked_for_during_a_switch_goes_on_after_it_at_the_same_rate(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    page = player_with_the_proxy_just_made(
        page_as, monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator
    )
    # The switch starts while paused (as a poll would), and playback at 0.5x is asked for
    # before it is done: the switch pauses for the new source, then playback goes on.
    switched = page.evaluate(
        """async () => {
            const p = window.frameledger.player;
            const switching = p.checkRenditions();
            p.setRate(0.5);
            await p.play();
            return await switching;
        }"""
    )
    assert switched is True
    page.wait_for_function("() => !window.frameledger.player.paused")
    state = page.evaluate(
        "() => { const p = window.frameledger.player;"
        " return { rendition: p.rendition, rate: p.video.playbackRate, switches: p.stats.switches }; }"
    )
    assert state == {"rendition": "proxy", "rate": 0.5, "switches": 1}
    before = page.evaluate("window.frameledger.player.currentFrame")
    page.wait_for_function("(f) => window.frameledger.player.currentFrame > f", arg=before)  # it moves on

    page.evaluate("() => window.frameledger.player.pause()")
    assert page.evaluate("window.frameledger.player.paused") is True


@pytest.mark.usefixtures("eager_celery")
def test_keys_read_during_a_switch_act_on_the_playback_asked_for(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    """A switch pauses the element for a moment; the player still counts as playing then,
    so Space (or h) pressed during it stops the playback that was asked for, and stays
    stopped after the switch, instead of being read as "play"."""
    page = player_with_the_proxy_just_made(
        page_as, monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator
    )
    # Playback is asked for as the switch begins (before it reaches the element); when the
    # new source has loaded, the element is paused for the switch: Space is pressed then.
    seen = page.evaluate(
        """async () => {
            const p = window.frameledger.player;
            let during = null, toggled = null;
            p.addEventListener("rendition", () => {
                during = { paused: p.paused, element: p.video.paused };
                toggled = p.togglePlay();
            }, { once: true });
            const switching = p.checkRenditions();
            await p.play();
            await switching;
            await toggled;
            await new Promise((resolve) => setTimeout(resolve, 300));  // no late resume
            return { during, after: p.paused, element: p.video.paused, rendition: p.rendition };
        }"""
    )
    assert seen == {
        "during": {"paused": False, "element": True},
        "after": True,
        "element": True,
        "rendition": "proxy",
    }


@pytest.mark.usefixtures("eager_celery")
def test_a_rate_chosen_during_a_switch_is_the_rate_after_it(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    """The rate is the one last chosen (a key, the menu), even when it is chosen while the
    new source loads: h pressed to stop half speed during a switch leaves 1x, not 0.5x."""
    page = player_with_the_proxy_just_made(
        page_as, monkeypatch, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator
    )
    seen = page.evaluate(
        """async () => {
            const p = window.frameledger.player;
            p.setRate(0.5);
            let chosen = false;
            p.video.addEventListener("loadstart", () => { p.setRate(1.5); chosen = true; }, { once: true });
            await p.checkRenditions();
            return { chosen, element: p.video.playbackRate, menu: p.rateSelect.value, rendition: p.rendition };
        }"""
    )
    assert seen == {"chosen": True, "element": 1.5, "menu": "1.5", "rendition": "proxy"}
    assert page.evaluate("window.frameledger.player.rate") == 1.5
