"""The page tells the truth in an outage (autosave.js, api.js, ledger_state.js): a save the
server does not answer is said to have failed within seconds, with the changes counted and
kept in the browser; a reload mid-outage after a save whose answer was lost opens no
conflict dialog, the server having the change."""

from __future__ import annotations

import time

import pytest

from tests.browser.ledger_pages import add_action_by_keyboard, ledger_rows, wait_ready, wait_saved
from tests.browser.test_never_lose_work import open_workspace, pending, server_events, status

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"


def test_a_save_the_server_does_not_answer_is_said_within_seconds_and_kept(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    held = []
    page.route("**/ledger/events/", lambda route: held.append(route))  # the server never answers
    started = time.monotonic()
    add_action_by_keyboard(page, 10, 30, "take", ["egg"])
    page.wait_for_function("() => document.querySelector('#save-status').dataset.status === 'failed'", timeout=15000)
    assert time.monotonic() - started < 10
    text = page.inner_text("#save-status")
    assert "could not be reached" in text and "did not answer within 6 s" in text
    assert "1 unsaved, kept in this browser" in text
    assert pending(page) == 1
    stored = page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('frameledger:ledger:')).length")
    assert stored == 1
    assert held  # the save reached the stalled server, and the page gave up on it
    page.unroute("**/ledger/events/")
    page.click("#retry-save")
    wait_saved(page, timeout=20000)
    assert server_events(packet) == [(10, 30, "take", ("egg",))]


def test_a_reload_mid_outage_after_a_lost_answer_opens_no_conflict(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)

    def lose_answer(route):
        route.fetch()  # the server saves it...
        route.abort("connectionreset")  # ...and the answer is lost in the outage

    page.route("**/ledger/events/", lose_answer)
    add_action_by_keyboard(page, 30, 60, "cut", ["cheese"])
    page.wait_for_function("() => document.querySelector('#save-status').dataset.status === 'failed'")
    assert server_events(packet) == [(30, 60, "cut", ("cheese",))]
    page.reload()
    wait_ready(page)
    wait_saved(page, timeout=20000)
    assert status(page) == "saved" and pending(page) == 0
    assert not page.is_visible("#conflict-dialog")
    assert server_events(packet) == [(30, 60, "cut", ("cheese",))]
    assert len(ledger_rows(page)) == 1
