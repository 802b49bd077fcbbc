"""Issue 43, standard keys first: the whole protocol (two annotators' ledgers, freeze, union,
decisions, publish) in real Chromium with Tab, Shift+Tab, Enter, Space and the arrows only
(and the text a person types into a box), typed at 30-50 ms through ``real_keys.py``.

- Space and Enter press the focused button (Freeze…, Freeze ledger, the frame buttons,
  Record decision, Publish) and never play the video.
- The arrows act on the focused control: in the decision's radio group they move the choice,
  and a decision arrowed from take A to take B records exactly take B; in the items list
  they move the chosen row (``aria-selected``), Enter plays it.
- After every action the focus is on a visible element with a focus style: the player after
  an event is saved (where the next event starts), the frozen banner after freezing, the
  items list after a decision, Publish after the last one, the version link after publishing.
"""

from __future__ import annotations

import json

import pytest

from annotator.models import Decision, GroundTruthVersion, Ledger
from tests.browser.ledger_pages import wait_ready, wait_saved
from tests.browser.real_keys import RealKeyboard
from tests.browser.standard_keys import assert_focus_visible, focused, tab_to, wait_focus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-24-gop250"  # 300 frames at 24 fps
ATTESTATION = "I labelled this video alone, from the video only."
# A and B agree on the cup, are within the tolerance on the plate, and each has one of its own.
A_EVENTS = [(10, 40, "take", "cup"), (60, 90, "put", "plate"), (120, 150, "cut", "bagel")]
B_EVENTS = [(10, 40, "take", "cup"), (64, 95, "put", "plate"), (180, 200, "open", "fridge")]

PLAYER = "#player .fl-player"
PAUSED = "() => window.frameledger.player.paused && !window.frameledger.player.seeking"


def ledger_by_keys(page, events) -> None:
    """Each event through its form: Tab to the verb box, the verb, Enter (on to the nouns),
    the noun, Tab (takes it), Tab on to the start, the frames, Enter; the focus then comes
    back, visibly, to the player, where the next event starts."""
    keys = RealKeyboard(page)
    assert_focus_visible(page, PLAYER)  # where the page opens
    for count, (start, end, verb, noun) in enumerate(events, 1):
        tab_to(keys, "#ev-verb")
        keys.type(verb)
        keys.press("Enter")  # takes the verb, on to the nouns
        wait_focus(page, "#ev-nouns")
        keys.type(noun)
        keys.press("Tab")  # takes the noun as a chip (the box is ready for another)
        chip = "(n) => document.querySelector('[data-field=nouns] .chip')?.dataset.value === n"
        page.wait_for_function(chip, arg=noun)
        tab_to(keys, "#ev-start_frame")
        keys.type(str(start))
        keys.press("Tab")
        keys.type(str(end))
        keys.press("Enter")  # adds the event
        page.wait_for_function("(n) => document.querySelectorAll('#ledger-table tbody tr').length === n", arg=count)
        assert_focus_visible(page, PLAYER)
    wait_saved(page)


def freeze_by_keys(page) -> None:
    """Shift+Tab back to Freeze…, Space; the attestation; Tab to Freeze ledger, Enter. The
    focus then is on the banner that says the ledger is frozen."""
    keys = RealKeyboard(page)
    tab_to(keys, "#freeze-open", back=True)
    keys.press(" ")
    page.wait_for_selector("#freeze-dialog[open]")
    wait_focus(page, "#attestation")
    keys.type(ATTESTATION)
    tab_to(keys, "#freeze-confirm")
    keys.press("Enter")
    page.wait_for_selector("#frozen-banner:not([hidden])")
    assert_focus_visible(page, "#frozen-banner")


def choose_by_arrows(page, keys: RealKeyboard, path: list[str]) -> None:
    """Shift+Tab back into the decision's radio group; arrows until ``path[0]`` is chosen,
    then one → for each next choice of ``path`` (["take_a", "take_b"]: from take A to take B,
    where the issue's adjudicator recorded take A)."""
    tab_to(keys, "#decision-form input[name=action]", back=True)
    for _ in range(6):
        if page.evaluate("document.querySelector('input[name=action]:checked')?.value") == path[0]:
            break
        keys.press("ArrowDown")
    wait_chosen(page, path[0])
    for action in path[1:]:
        keys.press("ArrowRight")
        wait_chosen(page, action)


def wait_chosen(page, action: str) -> None:
    """The decision's radio button ``action`` is checked and has the focus."""
    try:
        page.wait_for_function(
            "(a) => document.querySelector('input[name=action]:checked')?.value === a"
            " && document.activeElement.value === a",
            arg=action,
            timeout=5000,
        )
    except Exception as error:  # playwright's TimeoutError: say what is chosen instead
        checked = page.evaluate("document.querySelector('input[name=action]:checked')?.value ?? null")
        raise AssertionError(f"{action} is not chosen: {checked} is, the focus is on {focused(page)}") from error


def decide_by_keys(page, keys: RealKeyboard, path: list[str], rationale: str, press: str) -> None:
    choose_by_arrows(page, keys, path)
    keys.press("Tab")
    wait_focus(page, "#rationale")
    keys.type(rationale)
    tab_to(keys, "#decide")
    keys.press(press)  # Space or Enter on Record decision


def chosen_row(page) -> dict:
    return page.evaluate(
        """() => {
          const grid = document.querySelector('#items-table');
          const rows = [...grid.querySelectorAll('tbody tr[aria-selected=true]')];
          return { positions: rows.map((r) => Number(r.dataset.position)),
                   active: grid.getAttribute('aria-activedescendant'),
                   title: document.querySelector('#item-title').textContent };
        }"""
    )


def luminance(rgb: str) -> float:
    channels = [int(v) / 255 for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_whole_protocol_with_tab_enter_space_and_arrows_only(
    page_as, media_packet, annotator_a, annotator_b, adjudicator
):
    packet = media_packet(VIDEO)
    for user, events in ((annotator_a, A_EVENTS), (annotator_b, B_EVENTS)):
        page = page_as(user, f"/packets/{packet.pk}/")
        wait_ready(page)
        ledger_by_keys(page, events)
        # Space on a focused frame button presses it (+10 twice: frame 20) and plays nothing.
        keys = RealKeyboard(page)
        page.wait_for_function(PAUSED)
        before = page.evaluate("window.frameledger.player.currentFrame")
        tab_to(keys, "#player button[data-act=fwd10]")
        keys.press(" ")
        keys.press(" ")
        page.wait_for_function("(n) => window.frameledger.player.currentFrame === n", arg=before + 20)
        page.wait_for_function(PAUSED)
        assert page.evaluate("document.activeElement.dataset.act") == "fwd10", focused(page)
        freeze_by_keys(page)
    side = {"A": A_EVENTS, "B": B_EVENTS}
    for ledger in Ledger.objects.filter(packet=packet):
        assert ledger.frozen_at is not None
        rows = [e.data for e in ledger.events.all()]
        stored = sorted((d["start_frame"], d["end_frame"], d["verb"], *d["nouns"]) for d in rows)
        assert stored == sorted(side[ledger.side])

    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    keys = RealKeyboard(page)
    # The items list has the focus, visibly; the first item needing a decision is chosen.
    assert_focus_visible(page, "#items-table[role=grid]")
    statuses = page.eval_on_selector_all("#items-table tbody tr", "rs => rs.map((r) => r.dataset.status)")
    assert statuses == ["agreed", "conflicting", "a_only", "b_only"], statuses
    assert chosen_row(page) == {"positions": [1], "active": "item-row-1", "title": "Item 2"}
    # Arrows move the choice in the list (never the player), Enter plays the chosen item.
    frame = page.evaluate("window.frameledger.player.currentFrame")
    keys.press("ArrowDown")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 3'")
    assert chosen_row(page) == {"positions": [2], "active": "item-row-2", "title": "Item 3"}
    keys.press("ArrowUp")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 2'")
    assert chosen_row(page)["positions"] == [1]
    keys.press("ArrowRight")  # nothing in a list of rows; the player is not stepped
    keys.press("ArrowLeft")
    page.wait_for_function(PAUSED)
    assert page.evaluate("window.frameledger.player.currentFrame") == frame
    keys.press("Enter")  # plays the chosen item at 0.5x from its first frame
    page.wait_for_function("() => document.querySelector('video.fl-video').playbackRate === 0.5")
    page.wait_for_function(PAUSED, timeout=20000)  # it stops at the item's end
    # The chosen row is drawn with an outline of at least 3:1 on the row and on the card.
    style = page.evaluate(
        "() => { const r = document.querySelector('#items-table tbody tr[aria-selected=true]');"
        " const s = getComputedStyle(r); return [s.outlineStyle, s.outlineColor, s.backgroundColor,"
        " getComputedStyle(r.closest('.card')).backgroundColor]; }"
    )
    assert style[0] == "solid", style
    assert contrast(style[1], style[2]) >= 3 and contrast(style[1], style[3]) >= 3, style

    # Item 2 (the plate, within the tolerance): arrowed from take A to take B, Space on
    # Record decision. Exactly take B is recorded, and the focus is back on the list.
    decide_by_keys(page, keys, ["take_a", "take_b"], "B ends where the plate is down.", " ")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 3'")
    assert_focus_visible(page, "#items-table")
    assert chosen_row(page) == {"positions": [2], "active": "item-row-2", "title": "Item 3"}
    decided = {d.item.position: d for d in Decision.objects.filter(item__union__packet=packet)}
    assert decided[1].action == "take_b"
    assert (decided[1].final_value["start_frame"], decided[1].final_value["end_frame"]) == (64, 95)
    # Item 3 (A only): take A, Enter on Record decision. Item 4 (B only): drop.
    decide_by_keys(page, keys, ["take_a"], "The bagel is cut.", "Enter")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 4'")
    assert_focus_visible(page, "#items-table")
    decide_by_keys(page, keys, ["drop"], "The fridge stays shut.", " ")
    # The last decision: the focus on Publish, now enabled.
    page.wait_for_function("() => !document.querySelector('#publish').disabled")
    assert_focus_visible(page, "#publish")
    decided = {d.item.position: d.action for d in Decision.objects.filter(item__union__packet=packet)}
    assert decided == {1: "take_b", 2: "take_a", 3: "drop"}

    # Publish: Space opens the confirmation (its Publish button has the focus), Enter
    # publishes; the focus goes to the new version's link.
    keys.press(" ")
    page.wait_for_selector("#publish-dialog[open]")
    wait_focus(page, "#publish-confirm")
    keys.press("Enter")
    page.wait_for_selector("#version-link")
    assert_focus_visible(page, "#version-link")
    version = GroundTruthVersion.objects.get(packet=packet, tier="adjudicated")
    published = sorted(
        (e["start_frame"], e["end_frame"], e["verb"], *e["nouns"]) for e in json.loads(version.canonical_json)["events"]
    )
    assert published == [(10, 40, "take", "cup"), (64, 95, "put", "plate"), (120, 150, "cut", "bagel")]
