"""What a screen reader hears, in real Chromium: the player's frame and timecode readouts
stay silent while the video plays and one announcement names the frame it stops on; an
added event is announced only once the server has accepted it (never when its save runs
into a conflict); a refused event marks its fields (``aria-invalid``, described by the
message) and one alert names each of them; publishing is announced; timeline lanes are named
lists whose bars say what they are, their frames and their state."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event
from annotator.models import Ledger
from tests.browser.ledger_pages import add_action_by_keyboard, wait_frame, wait_ready, wait_saved
from tests.browser.real_keys import type_keys
from tests.browser.spoken import listen, spoken
from tests.browser.test_accessibility_axe import A_EVENTS, B_EVENTS, fill_ledger

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-24-gop250"  # 300 frames at 24 fps


def frame_announcements(page) -> list[str]:
    return [text for text in spoken(page) if text.startswith("Frame ") or text.isdigit() or text.count(":") >= 2]


def test_the_readouts_are_silent_during_playback_and_the_frame_it_stops_on_is_announced(
    page_as, media_packet, annotator_a
):
    packet = media_packet(VIDEO)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    for output in page.locator(".fl-readout output").all():
        assert output.get_attribute("aria-live") == "off"
    assert page.get_attribute("input.fl-scrub", "aria-label") == "Frame (seek)"
    names = page.eval_on_selector_all(".fl-controls button[data-act^=back], .fl-controls button[data-act^=fwd]",
                                      "bs => bs.map(b => b.getAttribute('aria-label'))")  # fmt: skip
    assert names == ["Back 10 frames", "Back 1 frame", "Forward 1 frame", "Forward 10 frames"]

    listen(page)
    page.click(".fl-controls button[data-act=play]")
    page.wait_for_function("() => window.frameledger.player.currentFrame >= 24")  # a second of playback
    assert frame_announcements(page) == [], "nothing is said while the video plays"
    page.click(".fl-controls button[data-act=play]")  # pause
    stopped = page.evaluate("() => window.frameledger.player.settled()")  # the frame the pause snapped to
    said = f"Frame {stopped}, " + page.inner_text(".fl-timecode")
    page.wait_for_function("(t) => window.__flSpoken.includes(t)", arg=said)
    assert frame_announcements(page) == [said]

    page.click(".fl-controls button[data-act=fwd1]")
    wait_frame(page, stopped + 1)
    said = "(n) => window.__flSpoken.includes(`Frame ${n}, ` + document.querySelector('.fl-timecode').textContent)"
    page.wait_for_function(said, arg=stopped + 1)
    assert len(frame_announcements(page)) == 2


def test_an_added_event_is_announced_only_once_the_server_accepted_it(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    listen(page)
    add_action_by_keyboard(page, 10, 20, "take", ["cup"])
    wait_saved(page)
    page.wait_for_function("() => window.__flSpoken.includes('Event added and saved.')")
    # The timeline bar of the event says what it is, its frames and that it is saved.
    assert page.get_attribute(".tl-lane[role=list] .tl-item[role=listitem]", "aria-label") == (
        "take · cup · frames 10–20 · saved"
    )
    assert not [text for text in spoken(page) if text.startswith("Event added") and text != "Event added and saved."]

    # Another tab saves first: this page's next save is refused with 412 (a conflict).
    ledger = Ledger.objects.get(packet=packet, side="A")
    do_add_event(ledger, {"verb": "put", "nouns": ["cup"], "start_frame": 100, "end_frame": 120},
                 actor=annotator_a, expected_version=1)  # fmt: skip
    listen(page)
    add_action_by_keyboard(page, 40, 50, "open", ["fridge"])
    page.wait_for_selector("#conflict-dialog[open]")
    assert not [text for text in spoken(page) if "added" in text.lower()], spoken(page)


def test_a_refused_event_names_its_fields_to_assistive_technology(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    listen(page)
    page.fill("#ev-start_frame", "90")
    page.fill("#ev-end_frame", "80")
    page.click("button.commit")
    page.wait_for_selector("#event-form .has-error")
    invalid = page.eval_on_selector_all("#event-form [aria-invalid=true]", "cs => cs.map(c => c.name)")
    assert "verb" in invalid, invalid
    for name in invalid:
        described = page.evaluate(
            '(n) => { const c = document.querySelector(`#event-form [name="${n}"][aria-invalid=true]`);'
            " return c.getAttribute('aria-describedby').split(' ')"
            ".map((id) => document.getElementById(id).textContent).join(' '); }",
            name,
        )
        assert described.strip(), f"{name}: its message is not what describes it"
    alert = next(text for text in spoken(page) if text.startswith("Not saved."))
    assert "verb: " in alert
    # Fixing every field takes the marks away.
    page.fill("#ev-end_frame", "100")
    page.fill("#ev-verb", "take")
    page.keyboard.press("Enter")
    type_keys(page, "cup")
    page.keyboard.press("Enter")  # adds the noun and the event
    wait_saved(page)
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    assert page.locator("#event-form [aria-invalid]").count() == 0
    assert page.inner_text("#event-form .form-error-summary") == ""


def test_publishing_is_announced(page_as, media_packet, annotator_a, annotator_b, adjudicator):
    from annotator.actions.adjudication import do_decide_item
    from annotator.actions.union import do_build_union

    packet = media_packet(VIDEO)
    fill_ledger(packet, "A", annotator_a, A_EVENTS)
    fill_ledger(packet, "B", annotator_b, B_EVENTS)
    for item in do_build_union(packet, actor=adjudicator).items.exclude(status="agreed"):
        do_decide_item(item, actor=adjudicator, action="take_a" if item.a_value else "drop", rationale="checked")
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    # Each lane is a named list; each bar is named by what it is, its frames and its state.
    lanes = page.eval_on_selector_all(".tl-lane[role=list]", "ls => ls.map((l) => l.getAttribute('aria-label'))")
    assert lanes == ["Timeline lane A", "Timeline lane B", "Timeline lane final"]
    first_a = page.get_attribute(".lane-a .tl-item[data-key='0']", "aria-label")
    assert first_a == "take · cup · frames 10–40 · agreed", first_a
    listen(page)
    page.click("#publish")
    page.wait_for_selector("#publish-dialog[open]")
    page.click("#publish-confirm")
    page.wait_for_selector("#version-link")
    page.wait_for_function("() => window.__flSpoken.includes('Published adjudicated v1.')")
