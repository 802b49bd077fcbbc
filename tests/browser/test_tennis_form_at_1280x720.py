"""Issue 37, item 4: the break-point workspace at 1280x720, typed as a person types (keys 30-50
ms apart, a real Shift). The "Event added." notice is never drawn over a field; an Enter
typed right after a select took its key saves the break point (it was swallowed); and the
events are in view with the form: at least three rows of the table above the fold."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event
from annotator.models import Ledger
from tests.browser.keyboard_scenario import TENNIS_EVENTS, TYPE_AHEAD, fewest
from tests.browser.ledger_pages import screenshot, wait_ready, wait_saved
from tests.browser.real_keys import RealKeyboard
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"  # 240 frames, a real player on the page
VIEWPORT = {"width": 1280, "height": 720}
# A break point's scalar fields in the order of TENNIS_EVENTS' rows (and of the form).
SCALARS = ["set", "medvedev_games", "de_minaur_games", "medvedev_points", "de_minaur_points", "server", "opportunity",
           "first_serve_in", "outcome", "serve_direction", "rally_shots", "terminal_player", "terminal_stroke",
           "terminal_court_position", "terminal_result", "terminal_error"]  # fmt: skip
OUTCOME = SCALARS.index("outcome")

# The form's controls that are on screen (inside every box that clips them) and overlap the
# notice line: [name or text, overlapping rectangle].
DRAWN_OVER_JS = """() => {
    const notice = document.querySelector('#notice').getBoundingClientRect();
    const meet = (a, b) => ({ left: Math.max(a.left, b.left), right: Math.min(a.right, b.right),
                              top: Math.max(a.top, b.top), bottom: Math.min(a.bottom, b.bottom) });
    const some = (r) => r.right - r.left > 0.5 && r.bottom - r.top > 0.5;
    const shown = (node) => {
        let rect = node.getBoundingClientRect();
        for (let box = node.parentElement; box; box = box.parentElement) {
            if (getComputedStyle(box).overflowY !== 'visible') rect = meet(rect, box.getBoundingClientRect());
        }
        return rect;
    };
    return [...document.querySelectorAll('#event-form :is(input, select, textarea, button, .field-label)')]
        .map((node) => [node.name || node.textContent, meet(shown(node), notice)])
        .filter(([, rect]) => some(rect));
}"""


def tennis_page(page_as, ingest, people):
    maintainer, annotator_a, annotator_b, adjudicator = people
    video = ingest(VIDEO)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=video)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    page.set_viewport_size(VIEWPORT)
    wait_ready(page)
    return packet, page


def type_break_point(page, keys: RealKeyboard, row, *, skip: int | None = None) -> None:
    """The break point ``row`` of the keyboard scenario, field after field from `e` (a select or
    a one-digit box takes its key and moves on; other boxes are left with Tab), then its shots
    (Alt+Enter, the stroke, Tab, the direction). ``skip``: a scalar left empty (the focus put
    past it, as a click would)."""
    page.locator("#workspace").focus()
    *scalars, directions = row
    keys.press("e")
    page.wait_for_function("() => document.activeElement.name === 'set'")
    for i, value in enumerate(scalars):
        name = page.evaluate("document.activeElement.name")
        if i == skip:
            page.locator(f"#event-form [name={SCALARS[i + 1]}]").focus()
            continue
        if i in TYPE_AHEAD:  # the shortest text only that choice fits, taken at once (or with Enter)
            text, confirm = fewest(page, TYPE_AHEAD[i], value, at_once=True)
            keys.type(text)
            if confirm:
                keys.press("Enter")
            page.wait_for_function("(n) => document.activeElement.name !== n", arg=name)
            continue
        keys.type(value)
        if page.evaluate("document.activeElement.name") == name:
            keys.press("Tab")
        else:  # taken at once: wait until the next box has the focus (the page moved it)
            page.wait_for_function("(n) => document.activeElement.name !== n", arg=name)
    for k, direction in enumerate(directions):
        keys.press("Alt+Enter")
        if k:
            keys.type("f" if k % 2 else "b")
        keys.press("Tab")
        keys.type(direction)


def rows(page) -> int:
    return page.evaluate("document.querySelectorAll('#ledger-table tbody tr').length")


def test_the_event_added_notice_is_never_drawn_over_a_field(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    packet, page = tennis_page(page_as, ingest, (maintainer, annotator_a, annotator_b, adjudicator))
    keys = RealKeyboard(page)
    type_break_point(page, keys, TENNIS_EVENTS[0])
    keys.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(page)
    assert page.inner_text("#notice") == "Event added."
    notice = page.locator("#notice").bounding_box()
    assert notice is not None and notice["y"] + notice["height"] <= VIEWPORT["height"]  # in view
    assert page.evaluate(DRAWN_OVER_JS) == []
    screenshot(page, "37-tennis-notice-under-the-form.png", full_page=False)


# A break point as the server stores it (the packet's default players).
POINT = {
    "set": 1, "medvedev_games": 2, "de_minaur_games": 3, "medvedev_points": "30", "de_minaur_points": "40",
    "server": "Daniil Medvedev", "opportunity": 1, "first_serve_in": True, "outcome": "saved",
    "serve_direction": "wide", "rally_shots": 1, "terminal_player": "Daniil Medvedev",
    "terminal_stroke": "serve", "terminal_court_position": "serve", "terminal_result": "ace",
    "terminal_error": "none", "shots": [{"stroke": "serve", "direction": "wide"}],
}  # fmt: skip


def test_three_rows_of_events_are_above_the_fold_with_the_player_the_timeline_and_the_form(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    people = (maintainer, annotator_a, annotator_b, adjudicator)
    packet = make_packet(*people, kind="break-point-ledger", video=ingest(VIDEO))
    ledger = Ledger.objects.get(packet=packet, side="A")
    for version in range(7):  # seven break points, as a ledger holds them after a while
        do_add_event(ledger, {**POINT, "opportunity": version + 1}, actor=annotator_a, expected_version=version)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    page.set_viewport_size(VIEWPORT)
    wait_ready(page)
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length >= 3")
    bottoms = page.eval_on_selector_all(
        "#ledger-table tbody tr", "rows => rows.map((r) => r.getBoundingClientRect().bottom)"
    )
    above = [bottom for bottom in bottoms if bottom <= VIEWPORT["height"]]
    assert len(above) >= 3, f"rows end at {bottoms}: {len(above)} above the fold"
    # ... with the player's controls, the timeline's lane and the form's first field.
    for selector in ("#player .fl-controls", ".tl-lane", "#event-form [name=set]"):
        box = page.locator(selector).bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= VIEWPORT["height"], selector
    screenshot(page, "37-tennis-rows-above-the-fold.png", full_page=False)


def test_an_enter_right_after_a_select_took_its_key_saves_the_break_point(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    packet, page = tennis_page(page_as, ingest, (maintainer, annotator_a, annotator_b, adjudicator))
    keys = RealKeyboard(page)
    row = TENNIS_EVENTS[0]
    type_break_point(page, keys, row, skip=OUTCOME)  # everything but the outcome
    # Back to the outcome (a click there): "s" takes "saved" at once and moves on; the Enter
    # typed 30-50 ms later is the annotator's "save", not a key typed out of habit.
    page.locator("#event-form [name=outcome]").focus()
    keys.type(row[OUTCOME])
    keys.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(page)
    (point,) = [e.data for e in Ledger.objects.get(packet=packet, side="A").events.all()]
    assert point["outcome"] == "saved" and point["set"] == 1 and len(point["shots"]) == 3
    assert page.inner_text("#notice") == "Event added."
