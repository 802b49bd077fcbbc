"""Issue 17, the annotator's side: the keyboard model and the defects it listed, each as a
regression test in real Chromium (drafts across a reload, Esc twice, a stale end frame,
an empty snapped interval, Space on a clicked button, h, go-to-frame, boundary and keyframe jumps,
validation in the page)."""

from __future__ import annotations

import pytest

from annotator.models import Ledger
from tests.browser.ledger_pages import (
    AT_HOME,
    add_action_by_keyboard,
    ledger_rows,
    screenshot,
    wait_frame,
    wait_ready,
    wait_saved,
)
from tests.browser.real_keys import press_key, type_keys
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"


def open_workspace(page_as, user, packet):
    page = page_as(user, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    return page


def draft(page) -> dict:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#event-form [name]')]"
        ".filter(n => n.id).map(n => [n.name, n.value]))"
    )


LEAVING_ASKS = (
    "() => { const e = new Event('beforeunload', {cancelable: true});"
    " window.dispatchEvent(e); return e.defaultPrevented; }"
)


def chips(page) -> list[str]:
    return page.eval_on_selector_all("[data-field=nouns] .chip", "cs => cs.map(c => c.dataset.value)")


def server_events(packet) -> list[dict]:
    return [e.data for e in Ledger.objects.get(packet=packet, side="A").events.order_by("created_at")]


def start_draft(page, start: int, verb: str, noun: str) -> None:
    type_keys(page, f"{start}i")
    page.wait_for_function("(s) => document.querySelector('#ev-start_frame').value === String(s)", arg=start)
    page.keyboard.press("e")
    type_keys(page, verb)
    page.keyboard.press("Enter")  # completes the verb and moves on to the nouns
    type_keys(page, noun)
    page.keyboard.press(",")  # adds the noun chip and stays for the next (Enter would save)
    page.keyboard.press("Escape")  # back to the page


def test_a_half_filled_new_event_survives_a_reload_and_the_page_warns_before_leaving(
    page_as, media_packet, annotator_a
):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    start_draft(page, 40, "tak", "egg")
    assert draft(page)["verb"] == "take" and chips(page) == ["egg"]
    # Leaving with a draft asks first (beforeunload is cancelled).
    assert page.evaluate(LEAVING_ASKS)
    page.reload()
    wait_ready(page)
    values = draft(page)
    assert (values["verb"], values["start_frame"], chips(page)) == ("take", "40", ["egg"])
    assert "back" in page.inner_text("#notice")
    # Completing it and saving forgets the kept draft.
    page.locator("#workspace").focus()
    type_keys(page, "70o")
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '70'")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert server_events(packet) == [{"verb": "take", "nouns": ["egg"], "start_frame": 40, "end_frame": 70}]
    # The kept draft is forgotten (only the player's frame is kept, for the next visit).
    assert page.evaluate("Object.keys(localStorage).filter((k) => !k.startsWith('frameledger:frame:'))") == []
    assert not page.evaluate(LEAVING_ASKS)


def test_esc_twice_never_loses_a_draft_silently_and_ctrl_z_brings_it_back(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    add_action_by_keyboard(page, 10, 20, "crack", ["egg"])
    wait_saved(page)
    start_draft(page, 40, "pou", "milk")
    # Selecting an existing event keeps the new one aside; Esc comes back to it.
    page.keyboard.press("[")
    page.wait_for_function("() => document.querySelector('#ev-verb').value === 'crack'")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('#ev-verb').value === 'pour'")
    page.keyboard.press("Escape")  # a second Esc on the page clears the draft, and says so
    assert draft(page)["verb"] == "" and chips(page) == []
    assert "Ctrl+Z" in page.inner_text("#notice")
    page.keyboard.press("Control+z")
    page.wait_for_function("() => document.querySelector('#ev-verb').value === 'pour'")
    assert draft(page)["start_frame"] == "40" and chips(page) == ["milk"]
    assert server_events(packet) == [{"verb": "crack", "nouns": ["egg"], "start_frame": 10, "end_frame": 20}]


def test_after_saving_with_enter_in_the_end_box_the_next_form_has_no_stale_end(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    type_keys(page, "100i")
    page.keyboard.press("e")
    type_keys(page, "take")
    page.keyboard.press("Enter")
    type_keys(page, "egg")
    page.keyboard.press("Enter")
    page.locator("#ev-end_frame").focus()
    type_keys(page, "130")
    page.keyboard.press("Enter")  # saves from the end box
    wait_saved(page)
    assert draft(page)["end_frame"] == "" and draft(page)["start_frame"] == ""
    # A later start with a fresh end works (the old end 130 must not come back).
    page.locator("#workspace").focus()
    type_keys(page, "150i")
    type_keys(page, "170o")
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")  # both ends marked: on to the verb
    type_keys(page, "put")
    page.keyboard.press("Enter")
    type_keys(page, "bowl")
    page.keyboard.press("Enter")  # adds the noun and saves
    wait_saved(page)
    assert server_events(packet) == [
        {"verb": "take", "nouns": ["egg"], "start_frame": 100, "end_frame": 130},
        {"verb": "put", "nouns": ["bowl"], "start_frame": 150, "end_frame": 170},
    ]


def test_validation_in_the_page_lists_candidates_and_catches_end_before_start(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    type_keys(page, "80i")
    type_keys(page, "60o")
    page.wait_for_function("() => document.querySelector('#ev-end_frame').value === '60'")
    assert page.evaluate(AT_HOME)  # the end is before the start: no move
    page.keyboard.press("e")
    type_keys(page, "take")
    page.keyboard.press("Enter")
    type_keys(page, "bage")  # the hint lists what it could be, the one Enter takes first
    hint = page.inner_text("[data-field=nouns] .typeahead-hint")
    assert hint.startswith("bagel (") and "also bagel container" in hint
    page.keyboard.press("Control+a")
    type_keys(page, "bx")
    assert "not one of the choices" in page.inner_text("[data-field=nouns] .typeahead-hint")
    page.keyboard.press(",")  # nothing to take: an error listing near choices, no chip
    error = page.inner_text("[data-field=nouns] .field-error")
    assert "did you mean" in error and "bagel" in error and chips(page) == []
    page.keyboard.press("Control+a")
    type_keys(page, "bagel_c")
    page.keyboard.press(",")
    assert chips(page) == ["bagel_container"]
    page.keyboard.press("Enter")  # save: refused in the page, before any request
    assert "before the start" in page.inner_text("[data-field=end_frame] .field-error")
    assert server_events(packet) == []
    assert page.evaluate("window.frameledger.store.getState().pending.length") == 0


def test_space_after_clicking_a_button_presses_it_and_h_toggles_half_speed(page_as, media_packet, annotator_a):
    """Space on the focused button presses it, as on any button (issue 43: it no longer
    plays the video); the player's keys (h) still work with the focus on it."""
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    page.click("#player button[data-act=fwd10]")
    wait_frame(page, 10)
    page.keyboard.press(" ")  # presses +10 again
    wait_frame(page, 20)
    assert page.evaluate("window.frameledger.player.paused")
    assert page.evaluate("document.querySelector('video.fl-video').playbackRate") == 1
    page.keyboard.press("h")
    page.wait_for_function("() => !window.frameledger.player.paused")
    assert page.evaluate("document.querySelector('video.fl-video').playbackRate") == 0.5
    page.keyboard.press("h")
    page.wait_for_function("() => window.frameledger.player.paused")
    assert page.evaluate("document.querySelector('video.fl-video').playbackRate") == 1


def test_half_speed_stopped_with_space_still_goes_back_to_the_rate_before(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    page.locator("#workspace").focus()
    rate = "() => document.querySelector('video.fl-video').playbackRate"
    page.keyboard.press("h")
    page.wait_for_function("() => !window.frameledger.player.paused")
    assert page.evaluate(rate) == 0.5
    page.keyboard.press(" ")  # stops half speed another way
    page.wait_for_function("() => window.frameledger.player.paused")
    page.keyboard.press("h")
    page.wait_for_function("() => !window.frameledger.player.paused")
    assert page.evaluate(rate) == 0.5
    page.keyboard.press("h")
    page.wait_for_function("() => window.frameledger.player.paused")
    assert page.evaluate(rate) == 1


def test_h_pressed_40_ms_after_space_paused_plays_at_half_speed(page_as, media_packet, annotator_a):
    """Space pauses (and snaps to the frame shown); h pressed before that snap has landed
    still plays at 0.5x, and the h after it stops at the rate before."""
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    rate = "() => document.querySelector('video.fl-video').playbackRate"
    for gap_ms in (30, 50):
        page.keyboard.press(" ")
        page.wait_for_function("() => window.frameledger.player.currentFrame > 2")
        page.keyboard.press(" ")
        page.wait_for_timeout(gap_ms)
        page.keyboard.press("h")
        page.wait_for_function("() => !document.querySelector('video.fl-video').paused")
        assert page.evaluate(rate) == 0.5, gap_ms
        page.keyboard.press("h")
        page.wait_for_function("() => window.frameledger.player.paused")
        assert page.evaluate(rate) == 1, gap_ms
        page.keyboard.press("Home")  # back to frame 0 for the next gap
        wait_frame(page, 0)


def test_i_pressed_30_ms_after_space_paused_marks_the_frame_the_pause_shows(page_as, media_packet, annotator_a):
    """Space pauses and snaps to the frame on screen; i pressed before that snap has landed
    marks the frame the player then stops on, not the one before it."""
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    settled = (
        "() => { const p = window.frameledger.player;"
        " return p.paused && !p.seeking && p.presentedFrame === p.currentFrame; }"
    )
    for gap_ms in (0, 30, 50):
        page.keyboard.press(" ")
        page.wait_for_function("() => window.frameledger.player.currentFrame > 4")
        page.keyboard.press(" ")
        if gap_ms:
            page.wait_for_timeout(gap_ms)
        page.keyboard.press("i")
        page.wait_for_function("() => document.querySelector('#ev-start_frame').value !== ''")
        page.wait_for_function(settled)
        shown = page.evaluate("window.frameledger.player.currentFrame")
        assert page.input_value("#ev-start_frame") == str(shown), gap_ms
        page.keyboard.press("Escape")
        page.keyboard.press("Escape")  # the draft discarded: the next i fills an empty box
        page.wait_for_function("() => document.querySelector('#ev-start_frame').value === ''")
        page.keyboard.press("Home")
        wait_frame(page, 0)


def test_go_to_frame_boundary_and_keyframe_jumps_and_one_second_steps(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    page.keyboard.press("g")
    assert page.evaluate("document.activeElement.matches('.fl-goto')")
    type_keys(page, "57")
    page.keyboard.press("Enter")
    wait_frame(page, 57)
    assert page.evaluate(AT_HOME)  # i / o work again
    page.keyboard.press("i")
    page.wait_for_function("() => document.querySelector('#ev-start_frame').value === '57'")
    page.keyboard.press("Alt+ArrowRight")
    wait_frame(page, 87)  # 29.97 fps: one second is 30 frames
    page.keyboard.press("o")
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")  # both ends marked: on to the verb
    type_keys(page, "open")
    page.keyboard.press("Enter")
    type_keys(page, "fridge")
    page.keyboard.press("Enter")  # adds the noun and saves
    wait_saved(page)
    page.keyboard.press("Home")
    wait_frame(page, 0)
    press_key(page, "}")
    wait_frame(page, 57)
    press_key(page, "}")
    wait_frame(page, 87)
    press_key(page, "{")
    wait_frame(page, 57)
    keyframes = page.evaluate("window.frameledger.player.clock.keyframes")
    after = next(k for k in keyframes if k > 57)
    page.keyboard.press("PageDown")
    wait_frame(page, after)
    page.keyboard.press("PageUp")
    wait_frame(page, max(k for k in keyframes if k < after))


def test_moment_interval_marked_inside_one_grid_step_is_never_empty(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=ingest(VIDEO))
    page = open_workspace(page_as, annotator_a, packet)
    type_keys(page, "37i")  # 1.235 s
    type_keys(page, "62o")  # 2.069 s: both ends snap to 2 s on the 2 s grid
    page.wait_for_function("() => document.querySelector('[name=intervals-end]')?.value === '4'")
    assert page.input_value("[name=intervals-start]") == "2"
    notice = page.inner_text("#notice")
    assert "2 s grid" in notice and "widened" in notice
    page.keyboard.press("e")
    type_keys(page, "q1")
    page.keyboard.press("Tab")
    type_keys(page, "someone opens the fridge")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert server_events(packet) == [{"query_id": "q1", "query": "someone opens the fridge", "intervals": [[2.0, 4.0]]}]
    (row,) = ledger_rows(page)
    assert (row[1], row[2]) == ("2 s", "4 s")


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= 720


def test_player_form_and_timeline_fit_1280_by_720(
    page_as, media_packet, ingest, annotator_a, annotator_b, maintainer, adjudicator
):
    packet = media_packet(VIDEO)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    page.set_viewport_size({"width": 1280, "height": 720})
    wait_ready(page)
    add_action_by_keyboard(page, 30, 60, "take", ["egg"])
    wait_saved(page)
    # The player's controls, the whole form with its save button, and the timeline's lane.
    for selector in ("#player .fl-controls", "#event-form button.commit", ".tl-lane"):
        assert in_view(page, selector), selector
    screenshot(page, "workspace-1280x720.png", full_page=False)

    tennis = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=ingest(VIDEO)
    )
    page = page_as(annotator_a, f"/packets/{tennis.pk}/")
    page.set_viewport_size({"width": 1280, "height": 720})
    wait_ready(page)
    sections = page.eval_on_selector_all("#event-form fieldset legend", "ls => ls.map(l => l.textContent)")
    assert sections == ["Score", "Serve and outcome", "Last shot", "Shots", "In the video"]
    assert in_view(page, "#player .fl-controls") and in_view(page, ".tl-strip")
    # Tab from the last label field never lands on "+ token": the form's buttons are not tab stops.
    assert page.get_attribute("[data-field=shots] .token-add", "tabindex") == "-1"
    screenshot(page, "tennis-1280x720.png", full_page=False)


def test_o_moves_on_to_the_verb_and_saving_leaves_the_playhead_where_a_contiguous_event_starts(
    page_as, media_packet, annotator_a
):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    type_keys(page, "12i40o")
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")
    type_keys(page, "t")
    assert page.inner_text("[data-field=verb] .typeahead-hint").startswith("take (")
    page.keyboard.press("Enter")  # takes "take", on to the nouns
    type_keys(page, "fr,e")  # fridge (the shortest "fr"), then egg
    page.keyboard.press("Enter")  # adds egg and saves
    wait_saved(page)
    wait_frame(page, 41)  # the frame after the saved end
    assert page.evaluate(AT_HOME)
    page.keyboard.press("i")  # the next event starts right there
    type_keys(page, "60o")
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")
    type_keys(page, "cr")
    page.keyboard.press("Enter")
    type_keys(page, "e")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 2")
    wait_saved(page)
    assert server_events(packet) == [
        {"verb": "take", "nouns": ["egg", "fridge"], "start_frame": 12, "end_frame": 40},  # a set, stored sorted
        {"verb": "crack", "nouns": ["egg"], "start_frame": 41, "end_frame": 60},
    ]


def test_letters_typed_straight_after_o_land_in_the_verb_box_not_in_shortcuts(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    type_keys(page, "12i40otake")  # no wait for the seek behind "o" to settle
    page.keyboard.press("Enter")
    type_keys(page, "egg")
    page.keyboard.press("Enter")
    wait_saved(page)
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    assert server_events(packet) == [{"verb": "take", "nouns": ["egg"], "start_frame": 12, "end_frame": 40}]


def test_an_end_before_the_start_gives_the_keys_back_to_the_page(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    type_keys(page, "40i12o")
    page.wait_for_function(AT_HOME)
    type_keys(page, "30i")  # a shortcut again: the start moves to 30
    page.wait_for_function("() => document.querySelector('[data-field=start_frame] input').value === '30'")


def test_text_typed_before_a_re_render_is_taken_in_when_the_box_is_left(page_as, media_packet, annotator_a):
    """A boundary mark that lands while a box is being typed in re-renders the form; the
    text survives on screen, and leaving the box with Tab must still put it in the draft
    (a value put back by script fires no "change" by itself)."""
    packet = media_packet(VIDEO)
    page = open_workspace(page_as, annotator_a, packet)
    page.locator("#ev-start_frame").focus()
    type_keys(page, "12")
    page.evaluate("window.frameledger.form.setDraft(window.frameledger.form.draft)")  # what a late mark does
    assert page.input_value("#ev-start_frame") == "12"
    page.keyboard.press("Tab")
    assert page.evaluate("window.frameledger.form.draft.start_frame") == 12


def test_enter_pressed_before_the_marks_land_saves_the_marked_interval(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    """A fast annotator types "37i62o", the query and Enter while the seeks behind the marks
    are still under way (here made slow on purpose): the event is saved once the marks have
    landed, with the interval they give, not refused for a missing end."""
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=ingest(VIDEO))
    page = open_workspace(page_as, annotator_a, packet)
    page.evaluate(
        """() => {
            const player = window.frameledger.player;
            const seek = player.seekToFrame.bind(player);
            player.seekToFrame = (n) => new Promise((done) => setTimeout(done, 700)).then(() => seek(n));
        }"""
    )
    type_keys(page, "37i62o")
    page.keyboard.press("e")
    type_keys(page, "q1")
    page.keyboard.press("Tab")
    type_keys(page, "someone takes an egg")
    # The marks are still on their way.
    assert page.evaluate("document.querySelectorAll('#ledger-table tbody tr').length") == 0
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(page)
    assert server_events(packet) == [{"query_id": "q1", "query": "someone takes an egg", "intervals": [[2.0, 4.0]]}]
    assert page.evaluate("window.frameledger.form.draft.query") is None  # the next event starts empty
