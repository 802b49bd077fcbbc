"""Issue 17, the adjudicator's side, in real Chromium: the union in tiers, within-tolerance
items settled by one key or by a bulk rule, the focus back on the item list after each
decision, a changed rationale replacing the old one (history in the audit log), keys into
the edit fields, and `u` not skipping the selected item."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.models import AuditEntry, Ledger, UnionItem
from tests.browser.ledger_pages import wait_ready
from tests.browser.real_keys import type_keys
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

A_EVENTS = [
    ("take", ["egg"], 10, 20),  # B 12-19: within the 12-frame tolerance
    ("pour", ["milk"], 40, 60),  # B pours into the bowl: a label conflict
    ("open", ["fridge"], 80, 100),  # identical: agreed
    ("crack", ["egg"], 120, 140),  # A only
    ("put", ["bowl"], 150, 170),  # B 160-175: within tolerance
]
B_EVENTS = [
    ("take", ["egg"], 12, 19),
    ("pour", ["bowl"], 40, 60),
    ("open", ["fridge"], 80, 100),
    ("put", ["bowl"], 160, 175),
]


def frozen_union(maintainer, annotator_a, annotator_b, adjudicator, *, a_events=A_EVENTS, b_events=B_EVENTS):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("tiers"))
    for side, actor, rows in (("A", annotator_a, a_events), ("B", annotator_b, b_events)):
        ledger = Ledger.objects.get(packet=packet, side=side)
        for version, (verb, nouns, start, end) in enumerate(rows):
            event = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
            do_add_event(ledger, event, actor=actor, expected_version=version)
        do_freeze_ledger(ledger, actor=actor, attestation="I labelled this video alone.", expected_version=len(rows))
    do_build_union(packet, actor=adjudicator)
    return packet


def decision(packet, verb: str):
    for item in UnionItem.objects.filter(union__packet=packet).select_related("decision"):
        value = item.a_value or item.b_value
        if value["verb"] == verb and hasattr(item, "decision"):
            return item.decision
    return None


def selected_title(page) -> str:
    return page.inner_text("#item-title")


def test_tiers_one_key_for_within_tolerance_focus_rationale_replacement_and_bulk(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    tiers = page.eval_on_selector_all("#items-table tbody tr", "rows => rows.map(r => r.dataset.tier)")
    assert tiers == ["within_tolerance", "conflict", "agreed", "one_sided", "within_tolerance"]
    assert "Δ start +2 · end −1" in page.inner_text("#items-table tbody tr[data-tier=within_tolerance] >> nth=0")
    assert "2 undecided item(s)" in page.inner_text("#tolerance-open")

    # u does not skip the selected first item; m settles it with the rounded mean.
    assert selected_title(page) == "Item 1"
    page.locator("#adjudication").focus()
    page.keyboard.press("u")
    assert selected_title(page) == "Item 1"
    assert page.is_visible("#tier-hint")
    page.keyboard.press("m")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 2'")
    taken = decision(packet, "take")
    assert (taken.action, taken.final_value["start_frame"], taken.final_value["end_frame"]) == ("edit", 11, 20)
    assert "tolerance of 12 frames" in taken.rationale
    assert page.evaluate("document.activeElement.id") == "items-table"

    # A conflict: choose, write, Ctrl+Enter; the focus goes back to the list, so the
    # next keys are shortcuts, not text in the rationale.
    page.keyboard.press("2")
    page.keyboard.press("r")
    type_keys(page, "The bowl gets the milk.")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 4'")
    assert page.evaluate("document.activeElement.id") == "items-table"
    page.keyboard.press("u")  # item 4 was played when selected: on to item 5
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 5'")
    page.keyboard.press("3")  # edit ...
    assert page.input_value("#rationale") == ""
    assert decision(packet, "pour").rationale == "The bowl gets the milk."

    # Changing a decision: the new rationale replaces the old one; both are in the log.
    for _ in range(3):  # from item 5 back to item 2
        page.keyboard.press("[")
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 2'")
    page.keyboard.press("1")
    page.keyboard.press("r")
    type_keys(page, "Milk: A after all.")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => document.activeElement.id === 'items-table'")
    poured = decision(packet, "pour")
    assert (poured.action, poured.rationale) == ("take_a", "Milk: A after all.")
    logged = [e.details["rationale"] for e in AuditEntry.objects.filter(operation="decide_item").order_by("pk")]
    assert "The bowl gets the milk." in logged and "Milk: A after all." in logged

    # e goes into the edit fields of the selected item (the A-only one).
    page.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 4'")
    page.keyboard.press("e")  # a key waits until the item it acts on is painted: wait for its effect
    page.wait_for_function("() => document.activeElement?.closest('#edit-form') !== null")
    page.keyboard.press("Escape")

    # The bulk rule settles the remaining within-tolerance item.
    page.click("#tolerance-bulk button[data-rule=b]")
    page.wait_for_function("() => document.querySelector('#bulk-progress').textContent.includes('1 item(s) decided')")
    put = decision(packet, "put")
    assert put.action == "take_b" and "took B" in put.rationale
    assert page.is_hidden("#tolerance-bulk")
    assert page.inner_text("#progress-text").startswith("3 of 4 decided")
