"""Never a mark on a picture the player could not confirm, measured on the shapes probe
refuses to remux (docs/media.md §2.4), in real Chromium.

The remuxes probe refuses (open GOPs, intra refresh, an MP4 trimmed behind an edit list)
are made here anyway, as if probe had missed the shape, to measure what Chromium does with
them: it cannot show every frame of any of them exactly. On the open-GOP one, the player
showed the number asked for over a frozen picture, and ``i`` recorded that number (the
issue: the start set to frame 200 while frame 0 was on screen). Now a key that reads the
frame is refused with the reason while the picture is not the frame asked for; a mark is
recorded only where the barcode on screen is the frame marked.
"""

from __future__ import annotations

import pytest

from annotator.base.media import synthetic
from tests.browser.ledger_pages import wait_ready
from tests.browser.real_keys import type_keys
from tests.browser.test_player import BOXES, SEEK_BATCH_JS
from tests.browser.test_remux import remux_video
from tests.factories import make_packet
from tests.media.conftest import EDIT_LIST_TRIM, EDIT_LIST_TRIM_FIRST_BARCODE

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


# What probe refuses to remux, and the barcode of each one's frame 0.
REFUSED = {OPEN_GOP: 0, "h264-intra-refresh": 0, EDIT_LIST_TRIM: EDIT_LIST_TRIM_FIRST_BARCODE}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_chromium_cannot_show_every_frame_of_a_remux_probe_refuses(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, name
):
    # The measurement behind the rule (measured: the open-GOP remux showed frame 0 frozen
    # after its first seek past the first GOP; intra refresh showed frame 38 for 30, the
    # refresh's end; the trimmed MP4 showed its first keyframe, frame 9, for frames 0-8).
    video = remux_video(synthetic_source(name), maintainer, checked=False)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=video, title=name)
    page = page_as(annotator_a, f"/packets/{packet.pk}/player/")
    page.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    targets = [t for t in [0, 1, 5, *TARGETS] if t < video.frame_count]
    results = page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": BOXES})
    wrong = [r for r in results if synthetic.decode_cell_means(r["means"]) != r["target"] + REFUSED[name]]
    assert wrong, f"Chromium showed every frame of the {name} remux exactly: the rule can be relaxed"
    assert page.evaluate("window.frameledger.player.stats.errors") > 0  # and the player said so


def test_a_mark_is_recorded_only_on_a_picture_that_is_the_frame_marked(page_as, open_gop_packet, annotator_a):
    page = page_as(annotator_a, f"/packets/{open_gop_packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    refused = 0
    for target in TARGETS:
        page.evaluate("() => { document.querySelector('#ev-start_frame').value = ''; }")
        type_keys(page, f"{target}i")
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
