"""`0` then Enter goes to frame 0 (the issue: a leading 0 zooms the timeline, so 0 then Enter did not
go to frame 0, and said nothing), while a 0 inside a typed number stays the number's and
Enter on its own still adds the event."""

from __future__ import annotations

import pytest

from tests.browser.ledger_pages import wait_frame, wait_ready
from tests.browser.real_keys import type_keys

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"


def test_zero_then_enter_goes_to_frame_zero_and_says_so(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    type_keys(page, "50")
    page.keyboard.press("Enter")
    wait_frame(page, 50)

    page.keyboard.press("0")
    page.keyboard.press("Enter")
    wait_frame(page, 0)
    assert "Frame 0" in page.inner_text("#notice")

    # A 0 inside a number is the number's: 10 then Enter is frame 10.
    type_keys(page, "10")
    page.keyboard.press("Enter")
    wait_frame(page, 10)
    # And Enter alone still adds the event (here: it says what is missing), not frame 0.
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#notice').textContent.includes('Fill in')")
    assert page.evaluate("window.frameledger.player.currentFrame") == 10
