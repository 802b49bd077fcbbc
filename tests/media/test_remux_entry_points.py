"""The remux is offered only where a browser can reach every frame of it by a seek.

Decided per source at probe (``remux.not_browser_playable``): a stream copy keeps the
source's GOPs, and a browser seeks by starting to decode at a keyframe, so

- an **intra-refresh** stream (one IDR, then recovery points marked as keyframes: decoding
  from one shows nothing until the refresh has swept the picture) was refused outright
  before: the remux's keyframe sprite asked for frame 30 and the decoder jumped past it;
- an **open-GOP** H.264 transport stream (frames decoded after a keyframe, shown before
  it) was remuxed, and Chromium's element failed for good at its first seek outside the
  first GOP (``PIPELINE_ERROR_DECODE``) while the player showed frame 0;
- an **MP4 trimmed by stream copy** (``ffmpeg -ss 0.5 -c copy``: an edit list) was
  remuxed starting at a non-keyframe, so its first frames could never be shown.

Now each goes proxy first, the job says why, and the proxy shows every frame exactly.
"""

from __future__ import annotations

import pytest

from annotator.base.media import synthetic
from annotator.base.media.probe import probe
from annotator.base.media.remux import not_browser_playable
from annotator.models import Video
from tests.media.conftest import EDIT_LIST_TRIM, EDIT_LIST_TRIM_FIRST_BARCODE

pytestmark = pytest.mark.django_db

REFUSED = {
    "h264-intra-refresh": ("no entry point", 0, 150),
    "h264-ts-open-gop": ("open GOP", 0, 144),
    EDIT_LIST_TRIM: ("not a keyframe", EDIT_LIST_TRIM_FIRST_BARCODE, 105),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_source_the_browser_cannot_seek_is_not_remuxed_and_its_proxy_is_exact(ingest, settings, name):
    settings.FRAMELEDGER_INGEST_REMUX_FIRST = True
    why, first, count = REFUSED[name]
    video = ingest(name)
    assert video.status == Video.Status.READY and video.error == ""
    assert not video.remux and video.proxy
    assert why in video.jobs.get().result["remux_refused"]
    assert video.frame_count == count
    shown = [index for _, index in synthetic.iter_decoded_indices(video.proxy.path)]
    assert shown == list(range(first, first + count))


@pytest.mark.parametrize("name", ["h264-24-gop250", "h264-2997-gop12", "vp9-webm", "h264-offset-1.5s"])
def test_sources_every_seek_can_reach_are_still_offered_as_a_remux(synthetic_source, name):
    source = synthetic_source(name)
    assert not_browser_playable(source, probe(source)) is None
