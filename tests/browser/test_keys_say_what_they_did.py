"""Keys that cannot act say so, and `e` lets typing replace: on a frozen ledger a key that
would change it (i, o, Enter, e, Delete, a nudge, undo) leaves a notice instead of nothing;
`e` selects the first field's text, so "close" typed over "open" is "close", not "openclose";
a word that is none of the choices is named once, not twice."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.models import Ledger
from tests.browser.ledger_pages import screenshot, wait_painted, wait_ready
from tests.browser.real_keys import RealKeyboard
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EVENT = {"verb": "open", "nouns": ["fridge"], "start_frame": 40, "end_frame": 80}


def workspace_with_one_event(page_as, people, *, frozen: bool):
    maintainer, annotator_a, annotator_b, adjudicator = people
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    ledger = Ledger.objects.get(packet=packet, side="A")
    do_add_event(ledger, EVENT, actor=annotator_a, expected_version=0)
    if frozen:
        do_freeze_ledger(ledger, actor=annotator_a, attestation="I labelled this video alone.", expected_version=1)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    return page


@pytest.mark.parametrize("keys", ["i", "120o", "\n", "e", "Delete", ".", "Control+z"])
def test_a_key_that_would_change_a_frozen_ledger_says_so(
    page_as, maintainer, annotator_a, annotator_b, adjudicator, keys
):
    page = workspace_with_one_event(page_as, (maintainer, annotator_a, annotator_b, adjudicator), frozen=True)
    typist = RealKeyboard(page)
    typist.press("]")  # select the event (moving works on a frozen ledger)
    page.wait_for_function("() => document.querySelector('#workspace').dataset.state === 'ready'")
    if len(keys) > 1 and not keys[0].isdigit():
        typist.press(keys)
    else:
        typist.type(keys)
    page.wait_for_function("() => document.querySelector('#notice').textContent.includes('frozen')")
    assert "can no longer change" in page.inner_text("#notice")
    assert page.get_attribute("#notice", "data-tone") == "bad"
    wait_painted(page)
    assert page.evaluate("document.activeElement.id") == "workspace"  # not into a read-only field
    if keys == "i":
        screenshot(page, "37-frozen-ledger-key.png", full_page=False)


def test_e_selects_the_first_fields_text_so_typing_replaces_it(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    page = workspace_with_one_event(page_as, (maintainer, annotator_a, annotator_b, adjudicator), frozen=False)
    typist = RealKeyboard(page)
    typist.press("]")
    page.wait_for_function("() => document.querySelector('#form-title').textContent.startsWith('Selected')")
    typist.press("e")
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")
    assert page.evaluate(
        "() => { const box = document.activeElement; return [box.value, box.selectionStart, box.selectionEnd]; }"
    ) == ["open", 0, 4]
    screenshot(page, "37-e-selects-the-verb.png", full_page=False)


# The texts on screen (not those only for screen readers) that say a typed word is no choice.
SHOWN_REFUSALS_JS = """() => [...document.querySelectorAll('#event-form *')]
    .filter((node) => !node.children.length && node.textContent.includes('is not one of the choices'))
    .filter((node) => node.getClientRects().length && !node.closest('.sr-only'))
    .map((node) => node.textContent)"""


def test_e_then_a_word_that_is_no_verb_is_named_once(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    page = workspace_with_one_event(page_as, (maintainer, annotator_a, annotator_b, adjudicator), frozen=False)
    typist = RealKeyboard(page)
    typist.press("]")
    page.wait_for_function("() => document.querySelector('#form-title').textContent.startsWith('Selected')")
    typist.press("e")
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")
    typist.type("xq\n")  # no verb is "xq": Enter names it
    page.wait_for_function("() => document.querySelector('[data-field=verb] .field-error').textContent !== ''")
    wait_painted(page)
    assert page.evaluate(SHOWN_REFUSALS_JS) == ["“xq” is not one of the choices"]
    screenshot(page, "37-e-error-once.png", full_page=False)
    # Typing on: the line under the box judges the new text; the error about "xq" goes.
    typist.type("z")
    page.wait_for_function(
        "() => document.querySelector('[data-field=verb] .typeahead-hint').textContent.includes('z')"
    )
    wait_painted(page)
    assert page.evaluate(SHOWN_REFUSALS_JS) == ["“xqz” is not one of the choices"]
