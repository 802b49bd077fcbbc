"""The scenario of ``bench/adjudication_keys.py`` (run through pytest for its fixtures). Not
collected by the suite: it measures and writes figures, asserting no time.

The demo's union: ledger A is the published GTEA Gaze+ labels of the demo video
(``Ahmad_American.txt``), ledger B the same labels as a second annotator gives them (seeded:
about 70 % with each boundary off by up to 8 frames, 10 % with another noun, 5 % off by
20-40 frames, 5 % left out, 10 % identical). The adjudicator decides every item that needs
a decision, keys only, as fast as the page lets them (no time to watch the video counted):

- on a page with tiers (this tree): within-tolerance items with ``m`` (the rounded mean),
  the others with 1 / 2 (take A / take B), ``r``, a short rationale, Ctrl+Enter;
- on a page without (``main``): every item with 1 / 2, ``r``, the rationale, Ctrl+Enter,
  and Esc, because the focus stays in the rationale box after a decision there.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest
from django.conf import settings

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.base.builtin_kinds import GTEA_NOUNS
from annotator.base.gtea import parse_gtea_labels
from annotator.models import Ledger
from tests.browser.keyboard_scenario import CountingKeyboard
from tests.browser.ledger_pages import wait_ready
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = Path(settings.BASE_DIR) / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests"
LABELS = LABELS / "Ahmad_American.txt"
RATIONALE = "Checked."


def second_annotator(rng: random.Random, events: list[dict]) -> list[dict]:
    out = []
    for data in events:
        roll = rng.random()
        if roll < 0.70:
            start = max(0, data["start_frame"] + rng.randint(-8, 8))
            out.append(
                {**data, "start_frame": start, "end_frame": max(start + 1, data["end_frame"] + rng.randint(-8, 8))}
            )
        elif roll < 0.80:
            nouns = sorted({*data["nouns"][:-1], rng.choice([n for n in GTEA_NOUNS if n not in data["nouns"]])})
            out.append({**data, "nouns": nouns})
        elif roll < 0.85:
            shift = rng.choice((-1, 1)) * rng.randint(20, 40)
            start = max(0, data["start_frame"] + shift)
            out.append({**data, "start_frame": start, "end_frame": max(start + 1, data["end_frame"] + shift)})
        elif roll < 0.90:
            continue
        else:
            out.append(dict(data))
    return out


def test_adjudicate_the_demo_union(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    a_events = parse_gtea_labels(LABELS.read_text())
    b_events = second_annotator(random.Random(17), a_events)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("demo union"))
    for side, actor, rows in (("A", annotator_a, a_events), ("B", annotator_b, b_events)):
        ledger = Ledger.objects.get(packet=packet, side=side)
        for version, data in enumerate(rows):
            do_add_event(ledger, data, actor=actor, expected_version=version)
        do_freeze_ledger(ledger, actor=actor, attestation="I labelled this video alone.", expected_version=len(rows))
    union = do_build_union(packet, actor=adjudicator)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page, timeout=120000)
    tiers = page.query_selector("#tolerance-bulk") is not None
    items = list(union.items.values_list("position", "status"))
    needed = [p for p, status in items if status != "agreed"]
    kb = CountingKeyboard(page)
    page.locator("#adjudication").focus()
    started = time.perf_counter()
    counts: dict[str, int] = {}
    for _ in needed:
        title = page.inner_text("#item-title")
        position = int(title.removeprefix("Item ")) - 1
        row = f'#items-table tr[data-position="{position}"]'
        tier = page.get_attribute(row, "data-tier") if tiers else None
        counts[tier or "needs a decision"] = counts.get(tier or "needs a decision", 0) + 1
        if tier == "within_tolerance":
            kb.press("m")
        else:
            status = page.get_attribute(row, "data-status")
            kb.press("1" if status == "a_only" else "2")
            kb.press("r")
            kb.type(RATIONALE)
            kb.press("Control+Enter")
            if not tiers:
                kb.press("Escape")  # main: the focus stays in the rationale box
        page.wait_for_selector(f"{row} td.decided")
    seconds = time.perf_counter() - started
    progress = page.inner_text("#progress-text")
    figures = {
        "items": len(items),
        "agreed": len(items) - len(needed),
        "needing_a_decision": len(needed),
        "by_tier": counts,
        "keys": kb.count,
        "seconds": round(seconds, 1),
        "progress": progress,
    }
    out = os.environ.get("FRAMELEDGER_ADJUDICATION_FIGURES")
    if out:
        with open(out, "w") as handle:
            json.dump(figures, handle)
