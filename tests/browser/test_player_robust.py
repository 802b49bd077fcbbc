"""The player on recordings whose timestamps a decoder does not honour, and the
always-pending rVFC. Real Chromium, real app, proxies joined from chunks (the ingest
fixture), barcodes read from the displayed pixels.

- open-GOP MPEG-TS cut at a non-IDR I-frame: the two leading B-frames are dropped; the
  kept frame i shows the source barcode ``48 + i`` (the cut starts at the third GOP);
- H.264 with B-frames in AVI (decode-order timestamps): frame i shows barcode i.
"""

from __future__ import annotations

import random

import pytest

from annotator.base.media import synthetic
from tests.browser.test_player import BOXES, SEEK_BATCH_JS, STEP_RUN_JS, open_player
from tests.media.conftest import OPEN_GOP_CUT, OPEN_GOP_CUT_FIRST_BARCODE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIRST_BARCODE = {OPEN_GOP_CUT: OPEN_GOP_CUT_FIRST_BARCODE, "h264-avi-bframes": 0}


def wrong(results, offset: int) -> list[str]:
    bad = []
    for r in results:
        shown = synthetic.decode_cell_means(r["means"])
        if not (shown == r["target"] + offset and r["got"] == r["current"] == r["target"]):
            bad.append(f"asked {r['target']}: shown {shown} (-{offset}), reported {r['got']}, current {r['current']}")
    return bad


@pytest.mark.parametrize("name", sorted(FIRST_BARCODE))
def test_every_kept_frame_is_shown_exactly(page_as, media_packet, annotator_a, name):
    page, count = open_player(page_as, media_packet, annotator_a, name)
    rng = random.Random(f"{name}-robust")
    targets = [0, 1, count - 2, count - 1] + [rng.randrange(count) for _ in range(100)]
    results = page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": BOXES})
    steps = page.evaluate(STEP_RUN_JS, {"start": 0, "steps": [1] * 30 + [-1] * 10, "boxes": BOXES})
    assert len(results) == 104 and len(steps) == 40
    assert wrong(results + steps, FIRST_BARCODE[name]) == []


def test_back_to_back_steps_are_on_screen_when_confirmed(page_as, media_packet, annotator_b):
    page, count = open_player(page_as, media_packet, annotator_b, "h264-2997-gop12")
    results = page.evaluate(
        """async ({ boxes }) => {
             const player = window.frameledger.player;
             const out = [];
             for (let i = 0; i < 60; i++) {   // no gap between steps: each starts when the last resolves
               const got = await player.step(i % 20 < 15 ? 1 : -1);
               out.push({ got, means: window.__flReadCells(boxes), presented: player.presentedFrame,
                          pending: player.frames.keepalive !== null });
             }
             return out;
           }""",
        {"boxes": BOXES},
    )
    for r in results:
        assert r["pending"], "no rVFC pending between steps"
        assert synthetic.decode_cell_means(r["means"]) == r["got"] == r["presented"], r
