"""Never a mark on a picture the player could not confirm, measured on the shapes probe
refuses to remux (docs/media.md §2.4), in real Chromium.

The remux of an open-GOP H.264 stream is made here anyway (as if probe had missed the
shape) to measure what Chromium does with it: its element cannot show frames outside the
first GOP exactly. Before, the player then showed the number asked for over a frozen
picture, and ``i`` recorded that number (the issue: the start set to frame 200 while
frame 0 was on screen). Now a key that reads the frame is refused with the reason while the
picture is not the frame asked for; a mark is recorded only where the barcode on screen is
the frame marked.
"""

from __future__ import annotations

import pytest

from annotator.base.media import synthetic
from tests.browser.ledger_pages import wait_ready
from tests.browser.test_player import BOXES, SEEK_BATCH_JS, failures
from tests.browser.test_remux import remux_video
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SERVER = "uvicorn"

OPEN_GOP = "h264-ts-open-gop"  # 144 frames, GOPs of 24 whose leading B-frames look back
TARGETS = [30, 55, 100, 130, 77, 5]


@pytest.fixture
def open_gop_packet(synthetic_source, maintainer, annotator_a, annotator_b, adjudicator):
    video = remux_video(synthetic_source(OPEN_GOP), maintainer, checked=False)
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title="open GOP remux")


def shown(page) -> int | None:
    return synthetic.decode_cell_means(page.evaluate("(boxes) => window.__flReadCells(boxes)", BOXES))


def test_chromium_cannot_seek_a_remux_of_open_gops_exactly(page_as, open_gop_packet, annotator_a):
    # The measurement behind the rule: why probe refuses this remux.
    page = page_as(annotator_a, f"/packets/{open_gop_packet.pk}/player/")
    page.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    results = page.evaluate(SEEK_BATCH_JS, {"targets": TARGETS, "boxes": BOXES})
    assert failures(results), "Chromium showed every frame of the open-GOP remux: the rule can be relaxed"
    assert page.evaluate("window.frameledger.player.confirmed") is False


def test_a_mark_is_recorded_only_on_a_picture_that_is_the_frame_marked(page_as, open_gop_packet, annotator_a):
    page = page_as(annotator_a, f"/packets/{open_gop_packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    refused = 0
    for target in TARGETS:
        page.evaluate("() => { document.querySelector('#ev-start_frame').value = ''; }")
        page.keyboard.type(f"{target}i")
        page.wait_for_function(
            "() => document.querySelector('#ev-start_frame').value !== ''"
            " || document.querySelector('#notice').textContent.includes('Nothing marked')"
        )
        marked = page.input_value("#ev-start_frame")
        if marked:
            assert int(marked) == target == shown(page), f"start {marked} marked over frame {shown(page)}"
        else:
            refused += 1
            notice = page.inner_text("#notice")
            assert f"frame {target} was asked for" in notice and page.get_attribute("#notice", "data-tone") == "bad"
            page.evaluate("() => { document.querySelector('#notice').textContent = ''; }")
    assert refused, "every seek was exact: this source no longer shows the failure"
