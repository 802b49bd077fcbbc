"""Adjudication keys at realistic speed: a key acts on the item on screen (keys typed while
a decision is recorded wait for the next item; a decision key typed then is refused),
re-deciding needs an explicit step, and two adjudicator tabs never overwrite each other's
decision in silence."""

from __future__ import annotations

import time

import pytest

from annotator.models import AuditEntry, Decision
from tests.browser.ledger_pages import wait_ready
from tests.browser.real_keys import type_keys
from tests.browser.test_keyboard_adjudication import frozen_union

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY_DELAY = 40


def decisions_logged() -> list[int]:
    return [e.details["position"] for e in AuditEntry.objects.filter(operation="decide_item").order_by("pk")]


def wait_title(page, title: str) -> None:
    page.wait_for_function("(t) => document.querySelector('#item-title').textContent === t", arg=title)


def slow_decisions(page, seconds: float = 0.4) -> None:
    """A slow network: every decision takes ``seconds`` to reach the server."""

    def slow(route):
        time.sleep(seconds)
        route.continue_()

    page.route("**/decision/", slow)


def test_a_twice_decides_the_item_on_screen_once_and_the_second_a_is_refused_with_a_notice(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    wait_title(page, "Item 1")
    slow_decisions(page)
    page.locator("#adjudication").focus()
    type_keys(page, "aa", spacing_ms=150)  # 150 ms apart; each decision takes 400 ms
    assert page.is_visible("#key-wait")  # the page says it is recording
    wait_title(page, "Item 2")
    # The second a was pressed while item 1's decision was recorded: item 2 was not on
    # screen, so the key is not kept for it.
    page.wait_for_function("() => !document.querySelector('#key-refused').hidden")
    assert "“a” was not used" in page.inner_text("#key-refused")
    page.wait_for_function("() => document.querySelector('#key-wait').hidden")
    assert page.inner_text("#action-error") == ""
    assert decisions_logged() == [0]
    assert not Decision.objects.filter(item__position=1).exists()


def test_redeciding_a_decided_item_needs_the_form_not_a_settle_key(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#adjudication").focus()
    page.keyboard.press("m")
    wait_title(page, "Item 2")
    page.keyboard.press("[")
    wait_title(page, "Item 1")
    page.keyboard.press("a")
    page.wait_for_function("() => document.querySelector('#action-error').textContent.includes('already decided')")
    assert "To change it: choose 1–5, write why (r), Ctrl+Enter" in page.inner_text("#action-error")
    assert decisions_logged() == [0]
    # The explicit way: choose, write why, Ctrl+Enter.
    type_keys(page, "1r", spacing_ms=KEY_DELAY)
    type_keys(page, "A's start is right.", spacing_ms=KEY_DELAY)
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => document.activeElement.id === 'items-table'")
    assert decisions_logged() == [0, 0]
    assert Decision.objects.get(item__union__packet=packet, item__position=0).action == "take_a"


def test_two_adjudicator_tabs_show_both_decisions_and_the_adjudicator_chooses(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator)
    first = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(first)
    second = first.context.new_page()
    second.goto(first.url)
    wait_ready(second)
    for page in (first, second):
        page.locator("#adjudication").focus()
        page.keyboard.press("]")
        wait_title(page, "Item 2")

    type_keys(first, "2r", spacing_ms=KEY_DELAY)
    type_keys(first, "The bowl gets the milk.", spacing_ms=KEY_DELAY)
    first.keyboard.press("Control+Enter")
    first.wait_for_function("() => document.activeElement.id === 'items-table'")
    assert Decision.objects.get(item__union__packet=packet, item__position=1).action == "take_b"

    type_keys(second, "1r", spacing_ms=KEY_DELAY)
    type_keys(second, "Milk alone.", spacing_ms=KEY_DELAY)
    second.keyboard.press("Control+Enter")
    second.wait_for_selector("#decision-conflict:not([hidden])")
    text = second.inner_text("#decision-conflict-text")
    assert "take b — “The bowl gets the milk.”" in text and "take a — “Milk alone.”" in text
    assert Decision.objects.get(item__union__packet=packet, item__position=1).action == "take_b"  # not overwritten
    assert second.input_value("#rationale") == "Milk alone."  # what was typed here is kept
    wait_title(second, "Item 2")

    second.click("#decision-record-mine")
    second.wait_for_selector("#decision-conflict", state="hidden")
    second.wait_for_function("() => document.querySelector('#item-title').textContent !== 'Item 2'")
    decision = Decision.objects.get(item__union__packet=packet, item__position=1)
    assert (decision.action, decision.rationale) == ("take_a", "Milk alone.")
    assert decisions_logged() == [1, 1]
