"""Relative marks typed as a keyboard sends them: "34⇧I" is 3, 4, a Shift keydown, then I.
The Shift (and Caps Lock, AltGr, a dead accent) is part of the key after it: it never ends
or cancels the frame typed before it, so "34⇧I" starts 34 frames after the playhead and
"60⇧O" ends 60 frames after the start. Keys 30-50 ms apart, on the 25,692-frame GTEA packet
(the stand-in player), from a page already open and from the navigation's commit."""

from __future__ import annotations

import pytest

from annotator.models import Ledger
from tests.browser.ledger_pages import AT_HOME, wait_ready, wait_saved
from tests.browser.real_keys import RealKeyboard
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SPACING = (30, 50)


def open_workspace(page_as, browser_server, annotator, packet, *, from_commit: bool):
    if not from_commit:
        page = page_as(annotator, f"/packets/{packet.pk}/")
        wait_ready(page)
        page.locator("#workspace").focus()
        return page
    page = page_as(annotator, "/")
    page.goto(f"{browser_server.url}/packets/{packet.pk}/", wait_until="commit")
    # Typing starts as soon as the page's body is there: long before its script is ready.
    page.wait_for_function("() => document.querySelector('#workspace') !== null", polling=5)
    return page


def draft(page) -> tuple[str, str]:
    return page.input_value("#ev-start_frame"), page.input_value("#ev-end_frame")


@pytest.mark.parametrize("from_commit", [False, True], ids=["page-open", "from-commit"])
def test_34_shift_i_marks_34_frames_after_the_playhead_and_saves_that_event(
    page_as, browser_server, maintainer, annotator_a, annotator_b, adjudicator, from_commit
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    page = open_workspace(page_as, browser_server, annotator_a, packet, from_commit=from_commit)
    # To frame 1000, the start 34 frames on, the end at 1100, "ta" (take), "cup", Enter.
    RealKeyboard(page, SPACING).type("1000g34I1100otacup\n")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(page)
    events = [e.data for e in Ledger.objects.get(packet=packet, side="A").events.all()]
    assert events == [{"verb": "take", "nouns": ["cup"], "start_frame": 1034, "end_frame": 1100}]


def test_60_shift_o_ends_60_frames_after_the_start_and_modifiers_never_end_a_typed_frame(
    page_as, browser_server, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    page = open_workspace(page_as, browser_server, annotator_a, packet, from_commit=False)
    keys = RealKeyboard(page, SPACING)
    keys.type("2000i60O")
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '2060'")
    assert draft(page) == ("2000", "2060")
    # "1", then Shift alone, Caps Lock on and off, AltGr, a dead accent, then "50⇧O": the end
    # 150 frames after the start. None of those keys ends or cancels the "1" typed before it.
    keys.press("Escape")  # out of the verb box the end moved the focus to
    page.wait_for_function(AT_HOME)
    keys.type("1")
    for key in ["Shift", "CapsLock", "CapsLock", "AltGraph"]:
        keys.press(key)
    keys.dead_key()
    assert page.inner_text("#notice").startswith("Frame 1…")
    keys.type("50O")
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '2150'")
    assert draft(page) == ("2000", "2150")
    assert page.input_value("#ev-verb") == ""  # nothing typed into the form on the way
