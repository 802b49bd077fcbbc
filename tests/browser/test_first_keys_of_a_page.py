"""The first keys of a page, typed 30-50 ms apart as the workspace opens. Every key from the
first one the document can receive is kept (the page's first script, _early_keys.html) and
run in order once the page is ready; a sequence whose beginning reached the page before it
could take keys is never run, and the page says so.

Chromium drops a key it sends while no document is there (after the last page's pagehide,
before the new document exists): no page sees it. So these tests start typing once the new
document exists (its location is the workspace's), which is the navigation's commit as the
page can know it."""

from __future__ import annotations

import pytest

from annotator.models import Ledger
from tests.browser.ledger_pages import wait_ready, wait_saved
from tests.browser.real_keys import RealKeyboard
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SPACING = (30, 50)
REFUSED = "type them again"


def saved_events(packet) -> list[dict]:
    return [e.data for e in Ledger.objects.get(packet=packet, side="A").events.order_by("created_at")]


def open_from_the_first_moment(page, url: str) -> None:
    """Navigates and returns as soon as the new document exists (before its scripts ran)."""
    page.goto(url, wait_until="commit")
    path = "/" + url.split("/", 3)[3]
    page.wait_for_function("(path) => location.pathname === path", arg=path, polling=5)


def wait_done(page) -> None:
    """Ready, every kept key replayed, and either the event saved or the refusal shown."""
    wait_ready(page)
    page.wait_for_function(
        "(refused) => !window.frameledger.keyGate.keys.length"
        " && (document.querySelectorAll('#ledger-table tbody tr').length === 1"
        " || document.querySelector('#notice').textContent.includes(refused))",
        arg=REFUSED,
    )
    wait_saved(page)


def test_keys_typed_as_the_workspace_opens_all_run_in_order_or_none_of_them_does(
    page_as, browser_server, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(annotator_a, "/")
    open_from_the_first_moment(page, f"{browser_server.url}/packets/{packet.pk}/")
    RealKeyboard(page, SPACING).type("300i360otacup\n")
    wait_done(page)
    if page.query_selector_all("#ledger-table tbody tr"):
        assert saved_events(packet) == [{"verb": "take", "nouns": ["cup"], "start_frame": 300, "end_frame": 360}]
    else:  # the first key reached the document before its first script ran
        assert page.get_attribute("#notice", "data-tone") == "bad"
        assert (page.input_value("#ev-start_frame"), page.input_value("#ev-end_frame")) == ("", "")
        assert saved_events(packet) == []


def test_a_sequence_whose_first_key_came_before_the_page_could_take_it_never_saves(
    page_as, browser_server, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(annotator_a, "/")
    # "3" goes down while the page before is still shown, and comes up on the workspace:
    # the workspace never had its keydown. What follows, "00i360o…", must not run.
    page.keyboard.down("3")
    page.goto(f"{browser_server.url}/packets/{packet.pk}/", wait_until="commit")
    page.wait_for_function("() => document.querySelector('#workspace') !== null", polling=5)
    page.keyboard.up("3")
    RealKeyboard(page, SPACING).type("00i360otacup\n")  # the page may become ready meanwhile
    wait_done(page)
    assert page.get_attribute("#notice", "data-tone") == "bad"
    assert "none of the 13 typed after it was used" in page.inner_text("#notice")
    assert (page.input_value("#ev-start_frame"), page.input_value("#ev-end_frame")) == ("", "")
    assert page.query_selector_all("#ledger-table tbody tr") == []
    assert saved_events(packet) == []
