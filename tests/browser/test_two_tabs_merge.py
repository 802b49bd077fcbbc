"""Two tabs on one ledger: re-applying after a conflict carries over only the fields this
tab changed (a field-level three-way merge); a field both tabs changed is shown with both
values and the annotator chooses. Keys are sent 40 ms apart, as a skilled annotator types.
"""

from __future__ import annotations

import pytest

from tests.browser.ledger_pages import add_action_by_keyboard, screenshot, wait_ready, wait_saved
from tests.browser.real_keys import press_key, type_keys
from tests.browser.test_never_lose_work import server_events

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"
KEY_DELAY = 40


def open_two(page_as, annotator_a, packet):
    first = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(first)
    add_action_by_keyboard(first, 30, 41, "take", ["cup"])
    wait_saved(first)
    second = first.context.new_page()
    second.goto(first.url)
    wait_ready(second)
    return first, second


def change_verb(page, verb: str) -> None:
    """Select the only event ([ from the end), click its verb, type another, Enter."""
    page.locator("#workspace").focus()
    page.keyboard.press("End")
    page.keyboard.press("[")
    page.wait_for_function("() => document.querySelector('#form-title').textContent.startsWith('Selected')")
    page.click("#ev-verb")
    page.keyboard.press("Control+a")
    type_keys(page, verb, spacing_ms=KEY_DELAY)
    page.keyboard.press("Enter")
    wait_saved(page)


def select_and_nudge_end(page, key: str) -> None:
    page.locator("#workspace").focus()
    page.keyboard.press("End")
    type_keys(page, "[b", spacing_ms=KEY_DELAY)
    press_key(page, key)


def test_reapply_keeps_the_other_tabs_verb_and_carries_only_this_tabs_end(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    first, second = open_two(page_as, annotator_a, packet)
    change_verb(first, "put")
    assert server_events(packet) == [(30, 41, "put", ("cup",))]

    select_and_nudge_end(second, ".")  # end 41 -> 42, on the version before "put"
    second.wait_for_selector("#conflict-dialog[open]")
    second.wait_for_function("() => !document.querySelector('#conflict-reapply').disabled")
    changes = second.inner_text("#conflict-changes")
    assert "your change: end frame 42" in changes
    assert "kept from the newer version: verb put" in changes
    assert second.inner_text("#conflict-choices").strip() == ""  # nothing both changed
    second.click("#conflict-reapply")
    wait_saved(second)
    assert server_events(packet) == [(30, 42, "put", ("cup",))]  # tab 1's verb, tab 2's end
    assert "1 change(s) from the newer version kept" in second.inner_text("#notice")
    assert second.input_value("#ev-verb") == "put"


def test_a_field_both_tabs_changed_shows_both_values_and_waits_for_a_choice(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    first, second = open_two(page_as, annotator_a, packet)
    # Tab 1: the end +10 (51) and the verb; tab 2: the end +1 (42).
    select_and_nudge_end(first, ">")
    wait_saved(first)
    change_verb(first, "put")
    assert server_events(packet) == [(30, 51, "put", ("cup",))]

    select_and_nudge_end(second, ".")
    second.wait_for_selector("#conflict-dialog[open]")
    second.wait_for_selector("#conflict-choices li.conflict")
    choices = second.inner_text("#conflict-choices")
    # The heading names the event both changed (as this tab last saw it: take, cup).
    heading = second.inner_text("#conflict-choices li.conflict strong")
    assert heading.startswith("Both changed: end frame of take") and "cup" in heading
    screenshot(second, "37-conflict-heading.png", full_page=False)
    assert "the newer version's: 51" in choices and "yours: 42" in choices
    assert second.is_disabled("#conflict-reapply")  # nothing is decided for the annotator
    assert "Choose a value for 1 field(s)" in second.inner_text("#conflict-choose")
    assert server_events(packet) == [(30, 51, "put", ("cup",))]

    second.check("#conflict-choices input[value=mine]")
    assert second.is_enabled("#conflict-reapply")
    second.click("#conflict-reapply")
    wait_saved(second)
    assert server_events(packet) == [(30, 42, "put", ("cup",))]  # the chosen end, the newer verb
    assert "1 field(s) both changed, as you chose" in second.inner_text("#notice")


def test_choosing_the_newer_value_keeps_it(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    first, second = open_two(page_as, annotator_a, packet)
    select_and_nudge_end(first, ">")
    wait_saved(first)
    select_and_nudge_end(second, ".")
    second.wait_for_selector("#conflict-choices li.conflict")
    second.check("#conflict-choices input[value=theirs]")
    second.click("#conflict-reapply")
    wait_saved(second)
    assert server_events(packet) == [(30, 51, "take", ("cup",))]
    assert second.evaluate("window.frameledger.store.getState().pending.length") == 0
