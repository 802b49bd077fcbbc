"""Marks typed at realistic speed (keys 40 ms apart) on the 25,692-frame GTEA packet: keys
typed while the workspace loads run once it is ready, out-of-range frames and reversed
intervals are said at once, and a reload gives back half-typed text and the frame.

The packet's video row has no media files, so the workspace uses its stand-in player
(frames typed by hand), which is enough for marks and drafts.
"""

from __future__ import annotations

import pytest

from tests.browser.ledger_pages import wait_ready
from tests.browser.real_keys import type_keys
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY_DELAY = 40
LAST = 25691


def draft_value(page, name: str) -> str:
    return page.input_value(f"#ev-{name}")


def notice(page) -> str:
    return page.inner_text("#notice")


def open_gtea(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    return packet, page


def test_keys_typed_while_the_workspace_loads_are_kept_and_run_in_order(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    url = page.url

    # The ledger's answer is held back while the keys are typed: the page is still loading.
    held = []
    page.route("**/ledger/", lambda route: held.append(route))
    page.goto(url)
    page.wait_for_function("() => document.querySelector('#workspace').dataset.state === 'loading'")
    type_keys(page, "777i800o", spacing_ms=KEY_DELAY)
    type_keys(page, "ta", spacing_ms=KEY_DELAY)  # on into the verb, as if the page had been ready
    assert held, "the ledger request was not held"
    assert page.get_attribute("#workspace", "data-state") == "loading"  # typed before it was ready
    assert "still loading: 10 key(s)" in notice(page)
    held[0].continue_()
    wait_ready(page)
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '800'")
    assert draft_value(page, "start_frame") == "777"
    assert draft_value(page, "end_frame") == "800"
    # "ta" went into the verb box, where only "take" fits: taken, and on to the nouns.
    page.wait_for_function("() => document.activeElement.id === 'ev-nouns'")
    assert draft_value(page, "verb") == "take"


def test_out_of_range_marks_and_jumps_say_what_happened(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    _, page = open_gtea(page_as, maintainer, annotator_a, annotator_b, adjudicator)
    type_keys(page, "30000i", spacing_ms=KEY_DELAY)
    page.wait_for_function("() => document.querySelector('#notice').textContent.includes('30000')")
    assert "past the last frame (25691): no start marked" in notice(page)
    assert page.get_attribute("#notice", "data-tone") == "bad"
    assert draft_value(page, "start_frame") == ""  # nothing clamped in silence

    type_keys(page, "99999", spacing_ms=KEY_DELAY)
    page.keyboard.press("Enter")
    page.wait_for_function("(n) => window.frameledger.player.currentFrame === n", arg=LAST)
    assert f"went to the last frame, {LAST}" in notice(page)


def test_a_reversed_interval_is_flagged_when_it_is_marked(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    _, page = open_gtea(page_as, maintainer, annotator_a, annotator_b, adjudicator)
    type_keys(page, "500i400o", spacing_ms=KEY_DELAY)
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '400'")
    page.wait_for_selector("[data-field=end_frame].has-error")
    assert "The end (400) is before the start (500)" in notice(page)
    assert page.get_attribute("#notice", "data-tone") == "bad"
    assert "before the start (500)" in page.inner_text("[data-field=end_frame] .field-error")
    # Marking the end again, after the start, clears the flag.
    type_keys(page, "520o", spacing_ms=KEY_DELAY)
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '520'")
    assert not page.locator("[data-field=end_frame].has-error").count()


def test_a_reload_gives_back_the_half_typed_noun_and_the_frame(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet, page = open_gtea(page_as, maintainer, annotator_a, annotator_b, adjudicator)
    type_keys(page, "12020i12052o", spacing_ms=KEY_DELAY)
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")
    type_keys(page, "ta", spacing_ms=KEY_DELAY)  # only "take" fits: taken, on to the nouns
    page.keyboard.press("Enter")  # out of habit: swallowed, it does not save the draft
    page.wait_for_function("() => document.activeElement.id === 'ev-nouns'")
    assert draft_value(page, "verb") == "take"
    type_keys(page, "cu", spacing_ms=KEY_DELAY)  # half-typed: not taken yet
    key = f"frameledger:frame:{packet.pk}:{annotator_a.username}"
    page.wait_for_function("(k) => localStorage.getItem(k) === '12052'", arg=key)
    url, context = page.url, page.context
    page.close(run_before_unload=False)

    again = context.new_page()
    again.goto(url)
    wait_ready(again)
    assert draft_value(again, "start_frame") == "12020"
    assert draft_value(again, "end_frame") == "12052"
    assert draft_value(again, "verb") == "take"
    again.wait_for_function("(n) => window.frameledger.player.currentFrame === n", arg=12052)
    assert again.evaluate("[document.activeElement.id, document.activeElement.value]") == ["ev-nouns", "cu"]
    assert "cup" in again.inner_text("[data-field=nouns] .typeahead-hint")
    # Typing goes on where it stopped: "p", Enter takes "cup" and adds the event.
    type_keys(again, "p", spacing_ms=KEY_DELAY)
    again.keyboard.press("Enter")
    again.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
