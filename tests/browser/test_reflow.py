"""Reflow (WCAG 1.4.10) in real Chromium: at 320 CSS px wide (1280 px at 400 % zoom) no page
scrolls sideways (the document's scrollWidth is at most its clientWidth; a wide table scrolls
inside its own box) and nothing is cut off: the top bar wraps, and at 640 px (200 % zoom) the
adjudication items table keeps its A and B columns wide enough to read. Screenshots of the
pages under artifacts/screens/ (reflow-320-*.png)."""

from __future__ import annotations

import pytest

from annotator.actions.union import do_build_union
from tests.browser.ledger_pages import wait_ready
from tests.browser.screens import SCREENS
from tests.browser.test_accessibility_axe import A_EVENTS, B_EVENTS, fill_ledger
from tests.browser.test_grading_diagnostics import scored_submission

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-24-gop250"
NARROW = {"width": 320, "height": 640}

# What sticks out of the window, for a failure's message: the widest elements past its right edge.
OVERFLOW_JS = """() => {
    const doc = document.documentElement;
    const out = [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > doc.clientWidth + 1 && e.getClientRects().length)
        .filter((e) => !e.parentElement || e.parentElement.getBoundingClientRect().right <= doc.clientWidth + 1)
        .slice(0, 6)
        .map((e) => {
            const name = typeof e.className === 'string' ? e.className.trim().split(/\\s+/).join('.') : '';
            const right = Math.round(e.getBoundingClientRect().right);
            return `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${name ? '.' + name : ''} right=${right}`;
        });
    return { scroll: doc.scrollWidth, client: doc.clientWidth, out };
}"""


def overflow(page) -> dict | None:
    found = page.evaluate(OVERFLOW_JS)
    return found if found["scroll"] > found["client"] else None


def shot(page, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"reflow-320-{name}.png"), full_page=True)


def check_pages(page_as, user, pages: dict[str, str], ready: dict[str, str] | None = None) -> dict[str, dict]:
    found = {}
    for name, path in pages.items():
        page = page_as(user, path)
        page.set_viewport_size(NARROW)
        if ready and name in ready:
            page.wait_for_function(ready[name], timeout=60000)
        page.wait_for_load_state("networkidle")
        shot(page, name)
        if (sideways := overflow(page)) is not None:
            found[name] = sideways
    return found


WORKSPACE_READY = "() => window.frameledger && (window.frameledger.ready || window.frameledger.loadError)"


def test_no_page_scrolls_sideways_at_320_px(page_as, chromium, browser_server, media_packet, maintainer,
                                            annotator_a, annotator_b, adjudicator):  # fmt: skip
    packet = media_packet(VIDEO)
    fill_ledger(packet, "A", annotator_a, A_EVENTS)
    fill_ledger(packet, "B", annotator_b, B_EVENTS)
    do_build_union(packet, actor=adjudicator)
    score = scored_submission(packet, maintainer)
    found = {}
    context = chromium.new_context(viewport=NARROW)
    try:
        signin = context.new_page()
        signin.goto(browser_server.url + "/login/")
        if (sideways := overflow(signin)) is not None:
            found["sign-in"] = sideways
    finally:
        context.close()
    found |= check_pages(
        page_as,
        annotator_a,
        {"annotator home": "/", "workspace": f"/packets/{packet.pk}/", "404": "/packets/999999/"},  # fmt: skip
        {"workspace": WORKSPACE_READY},
    )
    found |= check_pages(page_as, adjudicator, {"adjudication": f"/packets/{packet.pk}/"},
                         {"adjudication": WORKSPACE_READY})  # fmt: skip
    found |= check_pages(
        page_as,
        maintainer,
        {
            "maintainer home": "/",
            "packet page": f"/packets/{packet.pk}/",
            "dashboard": "/dashboard/",
            "people": "/people/",
            "person": f"/people/{annotator_a.pk}/",
            "projects": "/projects/",
            "task-kind editor": "/task-kinds/",
            "audit": "/audit/",
            "packet audit": f"/packets/{packet.pk}/audit/",
            "new packet": "/maintainer/packets/new/",
            "moment import": "/imports/moments/",
            "grading": f"/grading/packets/{packet.pk}/",
            "agreement": f"/grading/packets/{packet.pk}/agreement/",
            "leaderboard": f"/grading/versions/{score.run.version_id}/",
            "score diagnostics": f"/grading/scores/{score.pk}/",
            "help": "/help/",
        },
    )
    report = "\n".join(f"{name}: {value}" for name, value in found.items())
    assert not found, f"{len(found)} page(s) scroll sideways at 320 px:\n{report}"


def test_the_adjudication_table_keeps_its_a_and_b_columns_at_200_percent_zoom(
    page_as, media_packet, annotator_a, annotator_b, adjudicator
):
    packet = media_packet(VIDEO)
    fill_ledger(packet, "A", annotator_a, A_EVENTS)
    fill_ledger(packet, "B", annotator_b, B_EVENTS)
    do_build_union(packet, actor=adjudicator)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    page.set_viewport_size({"width": 640, "height": 360})  # 1280x720 at 200 %
    wait_ready(page)
    widths = page.eval_on_selector_all(
        "#items-table thead th", "ths => ths.map((th) => [th.textContent, th.getBoundingClientRect().width])"
    )
    sides = {name: width for name, width in widths if name in ("A", "B")}
    assert sides["A"] >= 9 * 14 and sides["B"] >= 9 * 14, widths  # 9rem at 14 px
    page.locator("#items-table tbody tr >> nth=1").scroll_into_view_if_needed()
    shown = page.eval_on_selector_all("#items-table tbody tr:nth-child(2) td", "tds => tds.map((td) => td.textContent)")
    assert "put" in " ".join(shown), shown
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / "reflow-640-adjudication.png"))
    assert overflow(page) is None, overflow(page)
