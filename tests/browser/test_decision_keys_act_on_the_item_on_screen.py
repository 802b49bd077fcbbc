"""A decision key acts on the item on screen when it is pressed. On the adjudication page,
`a` twice (10 ms or 45 ms apart) while the first decision is being recorded: the first
decides item 1, the second is refused with a notice, never kept to decide item 2, which was
not on screen when it was pressed; item 2 is then on screen and one more `a` decides it.
Typed as the page opens (from the navigation's commit), a decision key is refused too:
no item was on screen. Keys 10-50 ms apart, as a fast adjudicator types."""

from __future__ import annotations

import time

import pytest

from annotator.models import AuditEntry
from tests.browser.ledger_pages import screenshot, wait_ready
from tests.browser.real_keys import RealKeyboard
from tests.browser.test_keyboard_adjudication import frozen_union

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Two items, both within the 12-frame tolerance: a / b / m decide either at once.
A_EVENTS = [("take", ["egg"], 10, 20), ("put", ["bowl"], 150, 170)]
B_EVENTS = [("take", ["egg"], 12, 19), ("put", ["bowl"], 160, 175)]
REFUSED = "was not used"


def decisions_logged() -> list[int]:
    return [e.details["position"] for e in AuditEntry.objects.filter(operation="decide_item").order_by("pk")]


def slow_decisions(page, seconds: float = 0.3) -> None:
    """A decision takes ``seconds`` to reach the server, as on a busy network."""

    def slow(route):
        time.sleep(seconds)
        route.continue_()

    page.route("**/decision/", slow)


def settled(page) -> None:
    """No decision in flight, no key waiting, the page ready."""
    page.wait_for_function(
        "() => window.frameledger.ready && !window.frameledger.keyGate.held && !window.frameledger.keyGate.keys.length"
        " && document.querySelector('#adjudication').dataset.state === 'ready'"
    )


def union_page(page_as, people):
    maintainer, annotator_a, annotator_b, adjudicator = people
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator, a_events=A_EVENTS, b_events=B_EVENTS)
    return packet, page_as(adjudicator, "/")


@pytest.mark.parametrize("spacing_ms", [10, 45])
def test_a_second_a_pressed_while_the_first_is_recorded_is_refused_not_kept_for_the_next_item(
    page_as, browser_server, maintainer, annotator_a, annotator_b, adjudicator, spacing_ms
):
    packet, page = union_page(page_as, (maintainer, annotator_a, annotator_b, adjudicator))
    page.goto(f"{browser_server.url}/packets/{packet.pk}/")
    wait_ready(page)
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 1'")
    slow_decisions(page)
    RealKeyboard(page, spacing_ms).type("aa")
    settled(page)
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 2'")
    assert decisions_logged() == [0]  # item 2 was never on screen when the second a went down
    assert page.is_visible("#key-refused")
    refusal = page.inner_text("#key-refused")
    assert "“a” was not used" in refusal and "recording the decision on item 1" in refusal
    # Both items within the tolerance: green underlines and deltas, never the red "conflicting".
    count = "(nodes) => nodes.length"
    assert page.eval_on_selector_all(".tl-item.st-conflicting", count) == 0
    assert page.eval_on_selector_all(".tl-item.st-within", count) >= 2  # lanes A and B
    assert page.eval_on_selector_all(".delta.nonzero", count) == 0
    assert page.eval_on_selector_all("#item-deltas .delta.within", count) == 2  # Δ start, Δ end
    screenshot(page, f"37-second-a-refused-{spacing_ms}ms.png")
    # Item 2 is on screen now: a decides it.
    RealKeyboard(page, spacing_ms).type("a")
    settled(page)
    assert decisions_logged() == [0, 1]


@pytest.mark.parametrize("spacing_ms", [10, 45])
def test_a_decision_key_typed_as_the_page_opens_is_refused(
    page_as, browser_server, maintainer, annotator_a, annotator_b, adjudicator, spacing_ms
):
    packet, page = union_page(page_as, (maintainer, annotator_a, annotator_b, adjudicator))
    page.goto(f"{browser_server.url}/packets/{packet.pk}/", wait_until="commit")
    page.wait_for_function("() => document.querySelector('#adjudication') !== null", polling=5)
    RealKeyboard(page, spacing_ms).type("]a")  # the next item, then decide it: nothing was on screen
    wait_ready(page)
    settled(page)
    assert decisions_logged() == []
    assert "“a” was not used: it was pressed while the page was loading" in page.inner_text("#key-refused")
    # The key that only moves ran: item 2 is selected.
    assert page.inner_text("#item-title") == "Item 2"
