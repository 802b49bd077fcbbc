"""WCAG 2.2 AA by axe-core (``tests/browser/axe.py``) in real Chromium, over every page state
a role reaches: signed out (sign-in, a set-password link, 404), the annotator (home, the
workspace empty, with a draft, with a refused event, with saved events, the shortcut sheet,
the freeze dialog, frozen, the conflict dialog, the tennis and moment forms empty, refused and
with rows), the adjudicator (the union with an item chosen, a decision,
the publish confirmation, published, the version page), and the maintainer (packet page,
dashboard, people and a person with an invitation link, projects, the task-kind
editor and a refusal in it, audit, new packet, imports, grading, the leaderboard, a
score's diagnostics, agreement). Each state must have no violation of the rules tagged
``wcag2a, wcag2aa, wcag21a, wcag21aa, wcag22aa``, nor of axe-core's ``best-practice`` rules
(none is left out: docs/ui.md, "Accessibility"); a failure lists every one of them, per state.
"""

from __future__ import annotations

import pytest

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.models import Ledger
from tests.browser.axe import WCAG_AA, violations
from tests.browser.ledger_pages import add_action_by_keyboard, wait_ready, wait_saved
from tests.browser.real_keys import type_keys
from tests.browser.screens import shot
from tests.browser.test_grading_diagnostics import scored_submission
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-24-gop250"  # 300 frames at 24 fps
VIEWPORT = {"width": 1280, "height": 720}
TAGS = [*WCAG_AA, "best-practice"]
ATTESTATION = "I labelled this video alone, from the video only."
A_EVENTS = [("take", ["cup"], 10, 40), ("put", ["plate"], 60, 90), ("cut", ["bagel"], 120, 150)]
B_EVENTS = [("take", ["cup"], 10, 40), ("put", ["plate"], 64, 95), ("open", ["fridge"], 180, 200)]


class Audit:
    """The violations found, per page state; ``check`` once per state, ``assert_clean`` at the end."""

    def __init__(self):
        self.found: dict[str, list[str]] = {}
        self.states: list[str] = []

    def check(self, page, state: str) -> None:
        self.states.append(state)
        found = violations(page, TAGS)
        if found:
            self.found[state] = found

    def assert_clean(self) -> None:
        report = "\n".join(f"{state}:\n  " + "\n  ".join(lines) for state, lines in self.found.items())
        assert not self.found, f"axe-core found violations in {len(self.found)} state(s):\n{report}"


def fill_ledger(packet, side, user, events, *, freeze=True):
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, (verb, nouns, start, end) in enumerate(events):
        data = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
        do_add_event(ledger, data, actor=user, expected_version=version)
    if freeze:
        do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(events))


def opened(page):
    page.set_viewport_size(VIEWPORT)
    return page


def test_signed_out_pages_pass_wcag_aa(chromium, browser_server, annotator_a):
    audit = Audit()
    context = chromium.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(browser_server.url + "/login/")
        audit.check(page, "sign-in")
        page.fill("#id_username", "nobody")
        page.fill("#id_password", "wrong password")
        page.click("button[type=submit]")
        page.wait_for_selector(".errorlist, .banner, .error")
        audit.check(page, "sign-in refused")
        assert page.goto(browser_server.url + "/people/set-password/x/y/").status == 404
        audit.check(page, "set-password link that is not valid")
    finally:
        context.close()
    audit.assert_clean()


def test_annotator_pages_pass_wcag_aa(page_as, media_packet, annotator_a):
    audit = Audit()
    packet = media_packet(VIDEO)
    home = opened(page_as(annotator_a, "/"))
    home.wait_for_selector(f"a[href$='/packets/{packet.pk}/']")
    audit.check(home, "annotator home")
    assert home.goto(home.url + "packets/999999/").status == 404
    audit.check(home, "404")

    page = opened(page_as(annotator_a, f"/packets/{packet.pk}/"))
    wait_ready(page)
    audit.check(page, "workspace, empty")
    page.fill("#ev-start_frame", "30")
    page.fill("#ev-end_frame", "20")
    audit.check(page, "workspace with a draft")
    page.click("button.commit")
    page.wait_for_selector("#event-form .has-error")
    audit.check(page, "workspace with a refused event")
    shot(page, "a11y-workspace-refused-1280x720", at="#event-form")
    page.fill("#ev-end_frame", "60")
    page.fill("#ev-verb", "take")
    page.keyboard.press("Enter")
    page.fill("[name=nouns] input, #ev-nouns", "cup")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(page)
    audit.check(page, "workspace with a saved event")
    page.click("#help-open")
    page.wait_for_selector("#help-dialog[open]")
    audit.check(page, "shortcut sheet")
    page.keyboard.press("Escape")
    page.click("#freeze-open")
    page.wait_for_selector("#freeze-dialog[open]")
    page.fill("#attestation", "short")
    audit.check(page, "freeze dialog")
    page.fill("#attestation", ATTESTATION)
    page.click("#freeze-confirm")
    page.wait_for_selector("#frozen-banner:not([hidden])")
    audit.check(page, "workspace, frozen")
    player = opened(page_as(annotator_a, f"/packets/{packet.pk}/player/"))
    player.wait_for_function("() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)")
    audit.check(player, "bare player")
    password = opened(page_as(annotator_a, "/account/password/"))
    audit.check(password, "change password")
    helppage = opened(page_as(annotator_a, "/help/"))
    audit.check(helppage, "help")
    audit.assert_clean()


def test_adjudicator_pages_pass_wcag_aa(page_as, media_packet, annotator_a, annotator_b, adjudicator):
    audit = Audit()
    packet = media_packet(VIDEO)
    fill_ledger(packet, "A", annotator_a, A_EVENTS)
    page = opened(page_as(adjudicator, f"/packets/{packet.pk}/"))
    wait_ready(page)
    audit.check(page, "adjudication, waiting for ledger B")
    fill_ledger(packet, "B", annotator_b, B_EVENTS)
    union = do_build_union(packet, actor=adjudicator)
    page.reload()
    wait_ready(page)
    audit.check(page, "adjudication, union")
    page.locator("#items-table tbody tr >> nth=2").click()
    audit.check(page, "adjudication, item chosen")
    shot(page, "a11y-adjudication-timeline-1280x720", at="#timeline-legend")
    for item in union.items.exclude(status="agreed"):
        do_decide_item(item, actor=adjudicator, action="take_a" if item.a_value else "drop", rationale="checked")
    page.reload()
    wait_ready(page)
    audit.check(page, "adjudication, all decided")
    page.click("#publish")
    page.wait_for_selector("#publish-dialog[open]")
    audit.check(page, "publish confirmation")
    page.click("#publish-confirm")
    page.wait_for_selector("#version-link")
    audit.check(page, "published")
    page.click("#version-link")
    page.wait_for_load_state()
    audit.check(page, "version page")
    audit.assert_clean()


def test_maintainer_pages_pass_wcag_aa(page_as, media_packet, maintainer, annotator_a, annotator_b, adjudicator):
    audit = Audit()
    packet = media_packet(VIDEO)
    fill_ledger(packet, "A", annotator_a, A_EVENTS[:1], freeze=False)
    score = scored_submission(packet, maintainer)
    pages = {
        "maintainer home": "/",
        "packet page": f"/packets/{packet.pk}/",
        "dashboard": "/dashboard/",
        "people": "/people/",
        "person": f"/people/{annotator_a.pk}/",
        "projects": "/projects/",
        "task-kind editor": "/task-kinds/",
        "audit": "/audit/",
        "packet audit": f"/packets/{packet.pk}/audit/",
        "new packet": "/maintainer/packets/new/",
        "moment import": "/imports/moments/",
        "label import": f"/packets/{packet.pk}/labels/import/",
        "assignment": f"/packets/{packet.pk}/assignment/",
        "grading": f"/grading/packets/{packet.pk}/",
        "agreement": f"/grading/packets/{packet.pk}/agreement/",
        "adjudication, read-only": f"/packets/{packet.pk}/adjudicate/",
    }
    for state, path in pages.items():
        page = opened(page_as(maintainer, path))
        page.wait_for_load_state("networkidle")
        audit.check(page, state)
    board = opened(page_as(maintainer, f"/grading/versions/{score.run.version_id}/"))
    board.wait_for_selector("#grading-version[data-state=ready]")
    audit.check(board, "leaderboard")
    diagnostics = opened(page_as(maintainer, f"/grading/scores/{score.pk}/"))
    diagnostics.wait_for_function("() => window.frameledger && window.frameledger.diagnostics")
    audit.check(diagnostics, "score diagnostics")

    people = opened(page_as(maintainer, "/people/"))
    people.fill("#invite-username", "carol")
    people.check("input[name=roles][value=annotator]")
    people.click("#invite")
    people.wait_for_selector("#invite-result")
    audit.check(people, "people, invitation link")

    kinds = opened(page_as(maintainer, "/task-kinds/"))
    kinds.locator("#kind-preview form.event-form").wait_for()
    kinds.fill("#kind-slug", "kitchen-hands")
    kinds.fill("#kind-name", "")
    kinds.click("#create-kind")
    kinds.wait_for_selector("#kind-error:not([hidden])")
    audit.check(kinds, "task-kind editor, refused")
    audit.assert_clean()


def test_the_forms_of_the_other_families_pass_wcag_aa(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    """The tennis form (a token list of shots) and the moment form (a list of intervals),
    empty, with rows added, and refused."""
    audit = Audit()
    video = ingest(VIDEO)
    for kind in ("break-point-ledger", "moment-queries"):
        packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind=kind, video=video, title=kind)
        page = opened(page_as(annotator_a, f"/packets/{packet.pk}/"))
        wait_ready(page)
        audit.check(page, f"{kind}: empty form")
        page.click("button.commit")
        page.wait_for_selector("#event-form .has-error")
        audit.check(page, f"{kind}: refused")
        page.locator("#workspace").focus()
        if kind == "break-point-ledger":
            page.keyboard.press("e")
            page.keyboard.press("Alt+Enter")  # a shot row
            page.keyboard.press("Alt+Enter")
            page.wait_for_function("() => document.querySelectorAll('#event-form .token-row').length >= 2")
        else:
            type_keys(page, "24i", 30)
            type_keys(page, "48o", 30)
            page.wait_for_function("() => (document.querySelector('[name=intervals-end]')?.value ?? '') !== ''")
        audit.check(page, f"{kind}: rows added")
    audit.assert_clean()


def test_the_conflict_dialog_passes_wcag_aa(page_as, media_packet, annotator_a):
    audit = Audit()
    packet = media_packet(VIDEO)
    page = opened(page_as(annotator_a, f"/packets/{packet.pk}/"))
    wait_ready(page)
    fill_ledger(packet, "A", annotator_a, A_EVENTS[:1], freeze=False)  # another tab saved first
    add_action_by_keyboard(page, 40, 50, "open", ["fridge"])
    page.wait_for_selector("#conflict-dialog[open]")
    page.wait_for_function("() => !document.querySelector('#conflict-reapply').disabled")
    audit.check(page, "conflict dialog")
    audit.assert_clean()
