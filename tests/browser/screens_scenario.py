"""Screenshots of the pages at 1280×720, to look at (not collected by the suite: no
``test_`` file name; run it by path). Writes PNGs under ``artifacts/screens/``.

    DJANGO_SETTINGS_MODULE=deploy.test_settings .venv/bin/pytest -q tests/browser/screens_scenario.py

The adjudication page holds the demo's union (ledger A: the published GTEA labels, B: a
seeded second annotator, as ``adjudication_scenario.py``); the leaderboard three scored
submissions, one over the size cap; the rest are the pages as a fresh packet shows them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions, run_chunks
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_import_provisional_version
from annotator.base.grading.uploads import byte_cap, make_file
from annotator.base.gtea import parse_gtea_labels
from annotator.models import Ledger
from tests.browser.adjudication_scenario import LABELS, second_annotator
from tests.browser.keyboard_scenario import TENNIS_EVENTS
from tests.browser.ledger_pages import wait_ready, wait_saved
from tests.browser.real_keys import press_key, type_keys
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENS = Path(__file__).resolve().parents[2] / "artifacts" / "screens"
VIEWPORT = {"width": 1280, "height": 720}


def shot(page, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / name))


def sized(page):
    page.set_viewport_size(VIEWPORT)
    return page


def demo_union(maintainer, annotator_a, annotator_b, adjudicator):
    a_events = parse_gtea_labels(LABELS.read_text())
    b_events = second_annotator(random.Random(17), a_events)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("demo union"))
    for side, actor, rows in (("A", annotator_a, a_events), ("B", annotator_b, b_events)):
        ledger = Ledger.objects.get(packet=packet, side=side)
        for version, data in enumerate(rows):
            do_add_event(ledger, data, actor=actor, expected_version=version)
        do_freeze_ledger(ledger, actor=actor, attestation="I labelled this video alone.", expected_version=len(rows))
    do_build_union(packet, actor=adjudicator)
    return packet, a_events


def test_screens(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    packet, truth = demo_union(maintainer, annotator_a, annotator_b, adjudicator)

    # 7: the adjudication items table, item 4 selected.
    page = sized(page_as(adjudicator, f"/packets/{packet.pk}/"))
    wait_ready(page, timeout=120000)
    page.locator("#items-table tbody tr >> nth=3").click()
    page.locator("#items-scroll").scroll_into_view_if_needed()
    shot(page, "07-adjudication-items.png")
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "12-adjudication-top.png")

    # 8: the leaderboard: three submissions, one over the size cap.
    version = do_import_provisional_version(packet, truth, actor=maintainer, source="demo", source_sha256="4" * 64)
    cap = byte_cap(packet.task_kind.scorer_id)
    files = [
        make_file("agent-one", "agent-one.json", [json.dumps({"actions": truth[:120]}).encode()], cap),
        make_file("agent-two", "agent-two.json", [json.dumps({"actions": truth[40:]}).encode()], cap),
        make_file("agent-huge", "agent-huge.json", [b" " * (cap.limit + 1)], cap),
    ]
    submissions = do_upload_submissions(packet, files, actor=maintainer)
    run = do_start_scoring_run(version, submissions, actor=maintainer, dispatch=False)
    for chunk in run_chunks(run):
        do_score_batch(run.pk, chunk)
    board = sized(page_as(maintainer, f"/grading/versions/{version.pk}/"))
    board.wait_for_selector("#leaderboard table tbody tr")
    board.wait_for_selector("#grading-version[data-state=ready]")  # leaderboard and calibration drawn
    board.locator("#leaderboard").scroll_into_view_if_needed()
    shot(board, "08-leaderboard.png")

    # 10: the maintainer's packet page, People, Audit.
    boss = sized(page_as(maintainer, f"/packets/{packet.pk}/"))
    wait_ready(boss)
    shot(boss, "10-packet-page.png")
    people = sized(page_as(maintainer, "/people/"))
    shot(people, "10-people.png")
    audit = sized(page_as(maintainer, "/audit/"))
    shot(audit, "10-audit.png")

    # 9: the ? sheet, and the tennis form after a break point is saved.
    fresh = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("fresh"))
    work = sized(page_as(annotator_a, f"/packets/{fresh.pk}/"))
    wait_ready(work)
    work.locator("#workspace").focus()
    press_key(work, "?")
    work.wait_for_selector("#help-dialog[open]")
    shot(work, "09-shortcut-sheet.png")
    work.keyboard.press("Escape")
    # 11: the freeze dialog.
    work.click("#freeze-open")
    shot(work, "11-freeze-dialog.png")
    work.keyboard.press("Escape")

    tennis = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=make_ready_video("tennis")
    )
    court = sized(page_as(annotator_a, f"/packets/{tennis.pk}/"))
    wait_ready(court)
    court.locator("#workspace").focus()
    *scalars, directions = TENNIS_EVENTS[0]
    court.keyboard.press("e")
    for i, value in enumerate(scalars):
        type_keys(court, value, spacing_ms=30)
        court.keyboard.press("Enter" if i in (12, 15) else "Tab")
    for k, direction in enumerate(directions):
        court.keyboard.press("Alt+Enter")
        if k:
            type_keys(court, "f" if k % 2 else "b")
        court.keyboard.press("Tab")
        type_keys(court, direction)
    court.keyboard.press("Enter")
    court.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(court)
    shot(court, "09-tennis-after-save.png")

    # 11: a moment query's marks, the new-packet page, Projects, the grading upload form.
    moments = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=make_ready_video("moments")
    )
    mq = sized(page_as(annotator_a, f"/packets/{moments.pk}/"))
    wait_ready(mq)
    mq.locator("#workspace").focus()
    type_keys(mq, "240i", spacing_ms=30)
    type_keys(mq, "480o", spacing_ms=30)
    mq.wait_for_function("() => (document.querySelector('[name=intervals-end]')?.value ?? '') !== ''")
    shot(mq, "11-moment-notice.png")
    new = sized(page_as(maintainer, "/maintainer/packets/new/"))
    new.wait_for_selector("#new-packet[data-state=ready]")
    # The step is greyed until a video is ready; the kind is set here only to show its field.
    new.evaluate(
        "() => { const s = document.querySelector('#task-kind-select'); s.value = 'moment-queries';"
        " s.dispatchEvent(new Event('change')); document.querySelector('#grid-field').scrollIntoView(); }"
    )
    shot(new, "11-new-packet.png")
    projects = sized(page_as(maintainer, "/projects/"))
    projects.select_option("#project-kind", "moment-queries")
    projects.locator("#project-form").scroll_into_view_if_needed()
    shot(projects, "11-projects.png")
    grading = sized(page_as(maintainer, f"/grading/packets/{packet.pk}/"))
    grading.wait_for_selector("#grading-packet[data-state=ready]")
    shot(grading, "11-grading-upload.png")
