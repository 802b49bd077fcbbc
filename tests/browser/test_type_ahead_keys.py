"""Issue 24, the type-ahead shortcuts at a person's key speed (keys 40 ms apart, waits on
what the page shows): a verb taken at once by its start or its words' starts ("o": open,
"tof": turn off) even where other names hold the letters; nouns by their words' starts
("mc": milk container); the values this ledger used most ranked first ("fr" takes
fridge, the shortest, until freezer has been used); a break point's terminal stroke and error
at once ("bg", "no"); the ? sheet's form keys."""

from __future__ import annotations

import pytest

from annotator.models import Ledger
from tests.browser.ledger_pages import screenshot, wait_painted, wait_ready, wait_saved
from tests.browser.real_keys import press_key, type_keys
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DELAY = 40  # ms between keys


def rows(page) -> int:
    return page.evaluate("document.querySelectorAll('#ledger-table tbody tr').length")


def mark(page, start: int, length: int) -> None:
    page.locator("#workspace").focus()
    page.wait_for_function("() => !window.frameledger.player.seeking")
    type_keys(page, f"{start}i{length}O", spacing_ms=DELAY)
    page.wait_for_function(
        "([s, e]) => document.querySelector('#ev-start_frame').value === String(s)"
        " && document.querySelector('#ev-end_frame').value === String(e)"
        " && document.activeElement.id === 'ev-verb'",
        arg=[start, start + length],
    )


def verb_at_once(page, text: str, verb: str) -> None:
    type_keys(page, text, spacing_ms=DELAY)
    page.wait_for_function(
        "(v) => document.querySelector('#ev-verb').value === v && document.activeElement.id === 'ev-nouns'", arg=verb
    )


def noun_then_save(page, text: str, hint: str, count: int) -> None:
    type_keys(page, text, spacing_ms=DELAY)
    # The line under the box names what Enter takes.
    page.wait_for_function(
        "(h) => document.querySelector('#ev-nouns').closest('.typeahead')"
        ".querySelector('.typeahead-hint').textContent.startsWith(h)",
        arg=hint,
    )
    page.keyboard.press("Enter")
    page.wait_for_function("(n) => document.querySelectorAll('#ledger-table tbody tr').length === n", arg=count)
    wait_saved(page)


def test_verbs_at_once_by_words_starts_and_nouns_ranked_by_this_ledgers_use(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video(), title="keys")
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)

    mark(page, 1200, 30)
    verb_at_once(page, "tof", "turn off")  # "to" fits turn on and turn off; "tof" only one
    noun_then_save(page, "fre", "freezer (", 1)  # nothing used yet: "fr" would be fridge (the shortest)

    mark(page, 3400, 40)
    verb_at_once(page, "o", "open")  # close, pour, move around hold an "o", but only open starts so
    noun_then_save(page, "mc", "milk container (", 2)  # the words' starts

    mark(page, 5100, 20)
    verb_at_once(page, "cl", "close")
    noun_then_save(page, "mi", "milk container (", 3)  # used once: before milk (unused)

    mark(page, 7000, 25)
    verb_at_once(page, "tof", "turn off")
    noun_then_save(page, "fr", "freezer (", 4)  # used once: before fridge now

    stored = [e.data for e in Ledger.objects.get(packet=packet, side="A").events.order_by("created_at")]
    assert [(e["verb"], e["nouns"], e["start_frame"], e["end_frame"]) for e in stored] == [
        ("turn off", ["freezer"], 1200, 1230),
        ("open", ["milk_container"], 3400, 3440),
        ("close", ["milk_container"], 5100, 5120),
        ("turn off", ["freezer"], 7000, 7025),
    ]
    assert rows(page) == 4

    # The ? sheet lists the form's keys under their own heading.
    page.locator("#workspace").focus()
    press_key(page, "?")
    page.wait_for_selector("#help-dialog[open]")
    sheet = page.inner_text("#help-dialog")
    assert "In the event form" in sheet and "tof turn off" in sheet and "used most come first" in sheet
    assert "d Daniil Medvedev" in sheet and "the verb of the event before" in sheet


def test_a_break_points_terminal_stroke_and_error_are_taken_at_once_by_words_starts(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    tennis = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=ingest("h264-2997-gop12")
    )
    page = page_as(annotator_a, f"/packets/{tennis.pk}/")
    wait_ready(page)
    value = "(n) => document.querySelector(`#event-form [name=${n}]`).value"
    focused = "document.activeElement.name"
    page.locator("#event-form [name=terminal_stroke]").focus()
    type_keys(page, "bg", spacing_ms=DELAY)  # backhand groundstroke: the only one "b g" starts
    page.wait_for_function(
        f"({value})('terminal_stroke') === 'backhand_groundstroke' && {focused} === 'terminal_court_position'"
    )
    page.locator("#event-form [name=terminal_error]").focus()
    type_keys(page, "n", spacing_ms=DELAY)  # net or none: not yet
    wait_painted(page)
    assert page.evaluate(focused) == "terminal_error" and page.evaluate(value, "terminal_error") == "n"
    type_keys(page, "o", spacing_ms=DELAY)  # "no": none
    page.wait_for_function(f"() => ({value})('terminal_error') === 'none' && {focused} !== 'terminal_error'")
    page.keyboard.press("Enter")  # out of habit, straight after: swallowed, nothing saved half-made
    wait_painted(page)
    assert rows(page) == 0
    assert page.evaluate(value, "terminal_stroke") == "backhand_groundstroke"


def test_a_break_points_selects_and_one_digit_boxes_take_a_key_at_once(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    tennis = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=ingest("h264-2997-gop12")
    )
    page = page_as(annotator_a, f"/packets/{tennis.pk}/")
    wait_ready(page)
    focused = "document.activeElement.name"
    # At 1280x720 every label is shown whole (they wrap): "Daniil Medvedev: games" and
    # "…: points" are never cut to the same text.
    cut = page.eval_on_selector_all(
        ".event-form .form-section .field-label",
        "labels => labels.filter((l) => l.scrollWidth > l.clientWidth + 1).map((l) => l.textContent)",
    )
    assert page.viewport_size == {"width": 1280, "height": 720} and cut == []
    screenshot(page, "37-tennis-form-labels.png", full_page=False)

    def at_once(key: str, field: str, value, then: str) -> None:
        type_keys(page, key, spacing_ms=DELAY)
        page.wait_for_function(
            "([f, v, t]) => JSON.stringify(window.frameledger.form.draft[f]) === JSON.stringify(v)"
            " && document.activeElement.name === t",
            arg=[field, value, then],
        )

    page.locator("#workspace").focus()
    page.keyboard.press("e")  # the first field: set
    page.wait_for_function(f"() => {focused} === 'set'")
    at_once("2", "set", 2, "medvedev_games")  # 1-5: one digit is the whole value
    page.keyboard.press("Tab")  # out of habit, straight after: swallowed, the focus stays
    wait_painted(page)
    assert page.evaluate(focused) == "medvedev_games"
    at_once("4", "medvedev_games", 4, "de_minaur_games")
    at_once("4", "de_minaur_games", 4, "medvedev_points")
    # "4" of the points is the start of 40 only, but "40" typed in full would put its "0"
    # into the next box: digits take only a whole value, so 40 keeps its Tab.
    type_keys(page, "4", spacing_ms=DELAY)
    wait_painted(page)
    assert page.evaluate(focused) == "medvedev_points"
    assert page.evaluate("document.querySelector('#event-form [name=medvedev_points]').value") == "40"
    page.keyboard.press("Tab")
    page.wait_for_function(f"() => {focused} === 'de_minaur_points'")
    at_once("a", "de_minaur_points", "AD", "server")  # the only value starting with "a"
    at_once("d", "server", "Daniil Medvedev", "opportunity")
    type_keys(page, "1", spacing_ms=DELAY)  # opportunity has no maximum: Tab
    page.keyboard.press("Tab")
    page.wait_for_function(f"() => {focused} === 'first_serve_in'")
    at_once("n", "first_serve_in", False, "outcome")  # yes / no
    at_once("s", "outcome", "saved", "serve_direction")
    at_once("w", "serve_direction", "wide", "rally_shots")
    # Two results start with "u" (unforced error, unreturnable): nothing taken at once.
    page.locator("#event-form [name=terminal_result]").focus()
    type_keys(page, "u", spacing_ms=DELAY)
    wait_painted(page)
    assert page.evaluate(focused) == "terminal_result"
    # What was taken is shown in each box, not only in the draft.
    shown = page.evaluate(
        "() => ['set', 'medvedev_games', 'de_minaur_points', 'server', 'first_serve_in']"
        ".map((n) => { const c = document.querySelector(`#event-form [name=${n}]`);"
        " return c.selectedOptions ? c.selectedOptions[0].textContent : c.value; })"
    )
    assert shown == ["2", "4", "AD", "Daniil Medvedev", "no"]
    assert rows(page) == 0


def verb_hint(page) -> str:
    return page.evaluate(
        "document.querySelector('#ev-verb').closest('.typeahead').querySelector('.typeahead-hint').textContent"
    )


def test_an_empty_verb_box_offers_the_previous_events_verb_and_enter_takes_it(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video(), title="keys")
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)

    mark(page, 1200, 30)
    assert verb_hint(page) == ""  # no event before: nothing offered
    verb_at_once(page, "tof", "turn off")
    noun_then_save(page, "fre", "freezer (", 1)

    mark(page, 3400, 40)
    verb_at_once(page, "o", "open")
    noun_then_save(page, "mc", "milk container (", 2)

    mark(page, 5100, 20)
    # The empty box names what Enter takes: the verb of the event before, open.
    page.wait_for_function(
        "() => document.querySelector('#ev-verb').closest('.typeahead')"
        ".querySelector('.typeahead-hint').textContent.startsWith('Enter: open, as the event before')"
    )
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#ev-verb').value === 'open' && document.activeElement.id === 'ev-nouns'"
    )
    noun_then_save(page, "fr", "freezer (", 3)

    # Between the first two on the timeline: the one before it is turn off (not the last typed).
    mark(page, 2000, 30)
    page.wait_for_function(
        "() => document.querySelector('#ev-verb').closest('.typeahead')"
        ".querySelector('.typeahead-hint').textContent.startsWith('Enter: turn off,')"
    )
    type_keys(page, "cl", spacing_ms=DELAY)  # typing chooses another: the hint names it
    page.wait_for_function("() => document.querySelector('#ev-verb').value === 'close'")
    noun_then_save(page, "mc", "milk container (", 4)

    # Before every event: nothing is offered, and Enter takes nothing (the verb is required).
    mark(page, 500, 20)
    assert verb_hint(page) == ""
    page.keyboard.press("Enter")
    wait_painted(page)
    assert page.evaluate("window.frameledger.form.draft.verb") is None and rows(page) == 4

    stored = [e.data for e in Ledger.objects.get(packet=packet, side="A").events.order_by("created_at")]
    assert [(e["verb"], e["nouns"], e["start_frame"]) for e in stored] == [
        ("turn off", ["freezer"], 1200),
        ("open", ["milk_container"], 3400),
        ("open", ["freezer"], 5100),
        ("close", ["milk_container"], 2000),
    ]
