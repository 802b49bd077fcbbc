"""The keyboard scenario of issue 17 works end to end: 5 action events, 3 tennis break
points and 3 moment intervals from a cold start, keys only, each stored exactly as meant.
``bench/keyboard.py`` runs the same scenario and prints the keys per event."""

from __future__ import annotations

import json
import os

import pytest

from annotator.models import Ledger
from tests.browser.keyboard_scenario import ACTION_EVENTS, Tally, action_events, moment_events, tennis_events
from tests.browser.ledger_pages import wait_ready
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"


def stored(packet) -> list[dict]:
    return [e.data for e in Ledger.objects.get(packet=packet, side="A").events.order_by("created_at")]


def cold_workspace(page_as, user, packet):
    page = page_as(user, f"/packets/{packet.pk}/")
    wait_ready(page)
    return page


def test_the_keyboard_scenario_stores_every_event_as_meant(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    tally = Tally()
    video = ingest(VIDEO)
    # Actions at real frame numbers: a packet over the GTEA video's 25,692 frames (its row
    # only: the workspace's stand-in player takes the typed frames).
    gtea = make_ready_video()
    actions = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=gtea, title="actions")
    action_events(cold_workspace(page_as, annotator_a, actions), tally)
    expected = [
        {"verb": verb, "nouns": sorted(nouns), "start_frame": s, "end_frame": e} for s, e, verb, nouns in ACTION_EVENTS
    ]
    assert stored(actions) == expected

    tennis = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=video)
    tennis_events(cold_workspace(page_as, annotator_a, tennis), tally)
    points = stored(tennis)
    assert [(p["set"], p["server"], len(p["shots"])) for p in points] == [
        (1, "Daniil Medvedev", 3),
        (2, "Daniil Medvedev", 1),
        (3, "Daniil Medvedev", 2),
    ]
    assert points[0]["terminal_stroke"] == "backhand_groundstroke" and points[0]["shots"][1]["direction"] == "middle"

    moments = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=video)
    moment_events(cold_workspace(page_as, annotator_a, moments), tally)
    assert [(q["query_id"], q["intervals"]) for q in stored(moments)] == [
        ("q1", [[2.0, 4.0]]),  # 1.235 s - 2.069 s: widened to one grid step
        ("q2", [[4.0, 6.0]]),
        ("q3", [[6.0, 8.0]]),
    ]

    # The figures, for bench/keyboard.py (which runs this test and prints them).
    out = os.environ.get("FRAMELEDGER_KEYBOARD_FIGURES")
    if out:
        with open(out, "w") as handle:
            json.dump(tally.rows, handle)
    assert all(n > 0 for _, _, n in tally.rows)
