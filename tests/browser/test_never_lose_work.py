"""Never lose work: the server cut off mid-edit, a save whose answer is lost, a closed
tab with unsaved changes, two tabs writing to the same ledger, and a refused event.

Every test ends by comparing the ledger in the database with exactly what the
annotator typed: nothing lost, nothing duplicated, nothing silently overwritten.
"""

from __future__ import annotations

import pytest

from annotator.models import Ledger
from tests.browser.ledger_pages import (
    add_action_by_keyboard,
    go_to_frame,
    ledger_rows,
    wait_ready,
    wait_saved,
    wait_status,
)
from tests.browser.real_keys import press_key

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"


def server_events(packet, side="A") -> list[tuple]:
    ledger = Ledger.objects.get(packet=packet, side=side)
    return sorted(
        (e.data["start_frame"], e.data["end_frame"], e.data["verb"], tuple(e.data["nouns"]))
        for e in ledger.events.all()
    )


def status(page) -> str:
    return page.get_attribute("#save-status", "data-status")


def pending(page) -> int:
    return page.evaluate("window.frameledger.store.getState().pending.length")


def open_workspace(page_as, user, packet):
    page = page_as(user, f"/packets/{packet.pk}/")
    wait_ready(page)
    return page


def test_edits_made_while_the_server_is_unreachable_are_kept_and_saved_when_it_returns(
    page_as, media_packet, annotator_a
):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    add_action_by_keyboard(page, 10, 30, "take", ["egg"])
    wait_saved(page)

    page.context.set_offline(True)
    add_action_by_keyboard(page, 50, 70, "crack", ["egg"])
    add_action_by_keyboard(page, 100, 130, "pour", ["milk", "bowl"])
    # Mid-edit: also move the first event's end with the nudge keys.
    page.keyboard.press("Home")
    page.keyboard.press("]")  # next event: the one at 10
    page.keyboard.press(".")  # nudge its selected boundary (the start, after selecting) by +1
    page.wait_for_function("() => document.querySelector('#save-status').dataset.status === 'failed'")
    assert "Save failed" in page.inner_text("#save-status")
    assert "Retrying in" in page.inner_text("#save-status")
    assert page.is_visible("#retry-save")
    # Two adds and one update, waiting (the nudge runs after the seeks before it, so it
    # may land just after the first failure is shown).
    page.wait_for_function("() => window.frameledger.store.getState().pending.length === 3", timeout=10000)
    assert pending(page) == 3
    assert [r[4] for r in ledger_rows(page)] == ["unsaved", "unsaved", "unsaved"]
    assert server_events(packet) == [(10, 30, "take", ("egg",))]  # nothing reached the server

    page.context.set_offline(False)  # the browser says "online": saving resumes at once
    wait_saved(page, timeout=20000)
    assert server_events(packet) == [
        (11, 30, "take", ("egg",)),
        (50, 70, "crack", ("egg",)),
        (100, 130, "pour", ("bowl", "milk")),
    ]
    # The saved queue is cleared (only the player's frame is kept, for the next visit).
    assert page.evaluate("Object.keys(localStorage).filter((k) => !k.startsWith('frameledger:frame:'))") == []


def test_a_server_error_is_retried_with_back_off_until_it_succeeds(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    failures = []

    def unavailable(route):
        failures.append(route.request.method)
        route.fulfill(status=503, content_type="text/html", body="<h1>Service Unavailable</h1>")

    page.route("**/ledger/events/**", unavailable)
    add_action_by_keyboard(page, 20, 40, "open", ["fridge"])
    page.wait_for_function("() => document.querySelector('#save-status').dataset.status === 'failed'")
    assert "503" in page.inner_text("#save-status")
    page.wait_for_function("() => window.frameledger.autosave.attempts >= 2", timeout=10000)  # retried on its own
    page.unroute("**/ledger/events/**")
    wait_saved(page, timeout=20000)
    assert failures and set(failures) == {"POST"}
    assert server_events(packet) == [(20, 40, "open", ("fridge",))]


def test_a_save_whose_answer_is_lost_is_found_on_the_server_and_not_duplicated(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)

    def lose_answer(route):
        route.fetch()  # the server does the work...
        route.abort("connectionreset")  # ...and the answer never arrives

    page.route("**/ledger/events/", lose_answer)
    add_action_by_keyboard(page, 30, 60, "cut", ["cheese"])
    page.wait_for_function("() => document.querySelector('#save-status').dataset.status === 'failed'")
    page.unroute("**/ledger/events/")
    # The automatic retry carries the old version: 412. The page reads the server's ledger,
    # finds the change there exactly, and says so: nothing to choose, no dialog.
    wait_saved(page, timeout=20000)
    assert "already saved" in page.inner_text("#notice")
    assert not page.is_visible("#conflict-dialog")
    assert server_events(packet) == [(30, 60, "cut", ("cheese",))]
    assert len(ledger_rows(page)) == 1


def test_unsaved_changes_survive_a_closed_tab_and_are_saved_on_the_next_visit(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    url = page.url
    context = page.context
    context.set_offline(True)
    add_action_by_keyboard(page, 40, 80, "spread", ["cheese"])
    wait_status(page, "failed")
    page.close(run_before_unload=False)
    assert server_events(packet) == []
    context.set_offline(False)

    again = context.new_page()
    again.goto(url)
    wait_ready(again)
    # A first send that fails on a loaded machine is retried after 1, 2, 4 and 8 s
    # (autosave.js RETRY_DELAYS_MS): wait past that back-off, not just one step of it.
    wait_saved(again, timeout=45000)
    assert server_events(packet) == [(40, 80, "spread", ("cheese",))]


def test_two_tabs_cannot_overwrite_each_other(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    first = open_workspace(page_as, annotator_a, packet)
    second = first.context.new_page()
    second.goto(first.url)
    wait_ready(second)

    # Tab 1 saves; tab 2, still on the old version, tries to save: 412, shown, nothing written.
    add_action_by_keyboard(first, 10, 20, "take", ["bowl"])
    wait_saved(first)
    add_action_by_keyboard(second, 100, 120, "put", ["plate"])
    second.wait_for_selector("#conflict-dialog[open]")
    assert status(second) == "conflict"
    assert "put" in second.inner_text("#conflict-changes")
    second.wait_for_function("() => !document.querySelector('#conflict-reapply').disabled")
    assert "1 event(s)" in second.inner_text("#conflict-server")
    assert server_events(packet) == [(10, 20, "take", ("bowl",))]

    # Discarding needs a second, explicit click; the annotator re-applies instead.
    second.click("#conflict-discard")
    assert "Really discard" in second.inner_text("#conflict-discard")
    assert second.is_visible("#conflict-dialog")
    second.click("#conflict-reapply")
    wait_saved(second)
    assert server_events(packet) == [(10, 20, "take", ("bowl",)), (100, 120, "put", ("plate",))]
    assert [(r[1], r[2]) for r in ledger_rows(second)] == [("10", "20"), ("100", "120")]

    # Now tab 1 is the stale one: its edit of its own event is refused, then re-applied on request.
    first.locator("#workspace").focus()
    first.keyboard.press("Home")
    first.keyboard.press("]")  # selects the event at 10 and seeks there
    first.keyboard.press("b")  # the end boundary
    press_key(first, ">")  # +10 frames
    first.wait_for_selector("#conflict-dialog[open]")
    assert server_events(packet) == [(10, 20, "take", ("bowl",)), (100, 120, "put", ("plate",))]
    first.wait_for_function("() => !document.querySelector('#conflict-reapply').disabled")
    first.click("#conflict-reapply")
    wait_saved(first)
    assert server_events(packet) == [(10, 30, "take", ("bowl",)), (100, 120, "put", ("plate",))]
    assert [(r[1], r[2]) for r in ledger_rows(first)] == [("10", "30"), ("100", "120")]


def test_an_event_the_server_refuses_comes_back_with_the_error_on_its_field(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    # The end on the start frame: the page checks only end < start (issue 17), so the form
    # sends it and the server, the one authority on event rules, refuses it (end_frame).
    add_action_by_keyboard(page, 90, 90, "flip", ["bacon"])
    page.wait_for_selector("[data-field=end_frame].has-error")
    assert "must be after start_frame" in page.inner_text("[data-field=end_frame] .field-error")
    assert status(page) == "invalid"
    assert server_events(packet) == []
    # Nothing was lost: the refused event is back in the form, as typed.
    assert page.input_value("#ev-start_frame") == "90"
    assert page.input_value("#ev-end_frame") == "90"
    assert page.input_value("#ev-verb") == "flip"
    # Fix the end with the keyboard and add it again.
    page.locator("#workspace").focus()
    go_to_frame(page, 120)
    page.keyboard.press("o")
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '120'")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert server_events(packet) == [(90, 120, "flip", ("bacon",))]
    assert not page.locator("[data-field=end_frame].has-error").count()
