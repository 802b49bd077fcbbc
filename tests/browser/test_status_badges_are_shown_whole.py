"""Issue 37, item 5: in the adjudication items table at 1280x720 every status is one badge,
shown whole: never "conflicting …" (a second badge repeating the tier, cut by its column),
within the tolerance in green as its own state."""

from __future__ import annotations

import pytest

from tests.browser.ledger_pages import screenshot, wait_ready
from tests.browser.test_keyboard_adjudication import B_EVENTS, frozen_union

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

B_ONLY = ("cut", ["bagel"], 200, 220)

# Per row of the items table: the status cell's badges, and whether the cell cuts them.
BADGES_JS = """() => [...document.querySelectorAll('#items-table tbody tr')].map((row) => {
    const cell = row.cells[1];
    return {
        badges: [...cell.children].map((badge) => badge.textContent),
        colour: getComputedStyle(cell.firstElementChild).color,
        cut: cell.scrollWidth > cell.clientWidth || [...cell.children].some((b) => b.scrollWidth > b.clientWidth),
    };
})"""


def test_every_status_is_one_badge_shown_whole_at_1280x720(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator, b_events=[*B_EVENTS, B_ONLY])
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    page.set_viewport_size({"width": 1280, "height": 720})
    wait_ready(page)
    page.wait_for_function("() => document.querySelectorAll('#items-table tbody tr').length === 6")
    rows = page.evaluate(BADGES_JS)
    assert [row["badges"] for row in rows] == [
        ["within tolerance"],
        ["conflicting"],
        ["agreed"],
        ["a only"],
        ["within tolerance"],
        ["b only"],
    ]
    assert [row for row in rows if row["cut"]] == []
    green, red = "rgb(22, 101, 52)", "rgb(153, 27, 27)"
    assert [row["colour"] for row in rows][:2] == [green, red]  # within the tolerance never looks like a conflict
    page.locator("#items-scroll").scroll_into_view_if_needed()
    screenshot(page, "37-status-badges-whole.png", full_page=False)
