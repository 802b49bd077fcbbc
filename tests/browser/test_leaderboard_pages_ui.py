"""The leaderboard page in real Chromium past one page (issue 38): the first page is drawn,
"Show more rows" (or scrolling to it) appends the next, the ranks carry on across the pages,
and the control goes once every row is there."""

from __future__ import annotations

import pytest

from annotator.reads.leaderboard import PAGE_SIZE
from tests.grading.conftest import adjudicated, scored, upload  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HALF = b'{"actions": [{"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 200}]}'
EMPTY = b'{"actions": []}'


def test_the_leaderboard_shows_more_rows_a_page_at_a_time(page_as, adjudicated, maintainer):  # noqa: F811
    named = {f"agent-{k:03d}": (HALF, EMPTY)[k % 2] for k in range(PAGE_SIZE + 3)}  # 52 halves, 51 empties
    scored(adjudicated, upload(adjudicated.packet, maintainer, named), maintainer)
    page = page_as(maintainer, f"/grading/versions/{adjudicated.pk}/")
    page.wait_for_selector("#grading-version[data-state=ready]")
    rows = "#leaderboard tbody tr:not(.lb-reference)"
    status = "#leaderboard [data-field=status]"
    assert page.locator(rows).count() >= PAGE_SIZE and " of 105 row(s)" in page.inner_text(status)  # 2 humans
    page.locator("[data-action=more-rows]").scroll_into_view_if_needed()
    page.locator("[data-action=more-rows]").click()  # or the scroll already asked: either way, all come
    page.wait_for_function(f"() => document.querySelectorAll('{rows}').length === 105")
    page.wait_for_selector("[data-action=more-rows]", state="hidden")
    assert page.inner_text(status).startswith("105 of 105 row(s)")
    ranks = [int(t) for t in page.locator(f"{rows} td:first-child").all_inner_texts()]
    assert ranks == sorted(ranks) and ranks.count(2) == 52 and ranks[-1] == 55 and ranks.count(55) == 51  # ties
