"""Real time in the browser, through a real ASGI server (Daphne, websockets included).

pytest-django's live server speaks WSGI only, so this module starts Daphne in a child
process on the same test database (as Channels' ChannelsLiveServerTestCase does) and
drives it with Chromium: presence that respects blindness, and two people on the same
union seeing each other's decisions without reloading.
"""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.models import Ledger
from tests.browser import asgi_server as asgi
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The ASGI server fixtures (tests/browser/asgi_server.py: uvicorn, as bin/run-demo runs it).
asgi_server = asgi.asgi_server
open_as = asgi.open_as


def chips(page) -> list[str]:
    return page.eval_on_selector_all("#presence .presence-chip", "cs => cs.map(c => c.textContent)")


def test_presence_shows_staff_everyone_and_an_annotator_only_their_own_tabs(
    open_as, packet, annotator_a, annotator_b, maintainer
):
    boss = open_as(maintainer, f"/packets/{packet.pk}/")
    page_a = open_as(annotator_a, f"/packets/{packet.pk}/")
    page_b = open_as(annotator_b, f"/packets/{packet.pk}/")
    boss.wait_for_function(
        "() => ['annotator_a', 'annotator_b'].every((u) => document.querySelector(`#presence [data-username=${u}]`))"
    )
    assert sorted(chips(boss)) == ["annotator_a · annotator a", "annotator_b · annotator b", "you"]
    page_a.wait_for_function("() => document.querySelectorAll('#presence .presence-chip').length === 1")
    assert chips(page_a) == ["you"] and chips(page_b) == ["you"]

    # A second tab of A's: A is told (and warned), B is not.
    second_a = open_as(annotator_a, f"/packets/{packet.pk}/", context=page_a.context)
    page_a.wait_for_function("() => document.querySelector('#presence').textContent === 'you (2 tabs)'")
    assert page_a.is_visible("#tabs-warning")
    assert chips(second_a) == ["you (2 tabs)"]
    second_a.close()
    page_a.wait_for_function("() => document.querySelector('#presence').textContent === 'you'")
    boss.wait_for_function("() => document.querySelector('#presence [data-username=annotator_a]')")

    # B's own second tab as a probe: its hello reaches B's socket after anything sent to it
    # before (one channel's messages arrive in order), so once B shows it, nothing about A
    # is still on its way to B.
    probe_b = open_as(annotator_b, f"/packets/{packet.pk}/", context=page_b.context)
    page_b.wait_for_function("() => document.querySelector('#presence').textContent === 'you (2 tabs)'")
    probe_b.close()
    page_b.wait_for_function("() => document.querySelector('#presence').textContent === 'you'")
    assert chips(page_b) == ["you"] and not page_b.is_visible("#tabs-warning")
    assert page_a.ws_frames and page_b.ws_frames  # the sockets were live
    for frame in page_b.ws_frames:
        assert "annotator_a" not in frame and "maintainer" not in frame
    for frame in page_a.ws_frames:
        assert "annotator_b" not in frame and "maintainer" not in frame


def test_two_people_on_the_same_union_see_each_others_decisions_live(
    open_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("live union"))
    for side, actor, noun in (("A", annotator_a, "egg"), ("B", annotator_b, "cup")):
        ledger = Ledger.objects.get(packet=packet, side=side)
        event = {"verb": "take", "nouns": [noun], "start_frame": 10, "end_frame": 20}
        do_add_event(ledger, event, actor=actor, expected_version=0)
        do_freeze_ledger(ledger, actor=actor, attestation="I labelled this video alone.", expected_version=1)
    do_build_union(packet, actor=adjudicator)

    judge = open_as(adjudicator, f"/packets/{packet.pk}/")
    follower = open_as(maintainer, f"/packets/{packet.pk}/adjudicate/")
    assert follower.is_hidden("#decision-form")  # maintainers follow, read-only
    judge.wait_for_function("() => document.querySelector('#presence [data-username=maintainer]')")
    follower.wait_for_function("() => document.querySelector('#presence [data-username=adjudicator]')")

    judge.locator("#adjudication").focus()
    judge.keyboard.press("2")  # take B
    judge.fill("#rationale", "The cup is in the hand at frame 12.")
    judge.keyboard.press("Control+Enter")
    judge.wait_for_selector("#items-table tr[data-status=conflicting] td.decided")
    # The maintainer's page learns it over the websocket, without reloading.
    follower.wait_for_selector("#items-table tr[data-status=conflicting] td.decided", timeout=10000)
    assert "take b · adjudicator" in follower.inner_text("#items-table tr[data-status=conflicting]")
    assert "adjudicator just decided this item" in follower.inner_text("#live-notice")
    assert follower.inner_text("#progress-text").startswith("1 of 1 decided")
