"""The page scripts that build their DOM with ui.js's one el() / textEl() and read through
api.js (issue 12, item 3) still draw their pages: the grading page of a packet (runs.js,
calibration through the version page) and the agreement page (agreement.js)."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.models import Ledger
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def errors_of(page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def test_the_grading_and_agreement_pages_draw_with_the_shared_helpers(
    page_as, maintainer, annotator_a, annotator_b, adjudicator, eager_celery
):
    # The agreement report follows the second freeze's commit as a task: eager here, so it
    # is stored when the page asks for it.
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("helpers"))
    for side, actor, noun in (("A", annotator_a, "egg"), ("B", annotator_b, "cup")):
        ledger = Ledger.objects.get(packet=packet, side=side)
        event = {"verb": "take", "nouns": [noun], "start_frame": 10, "end_frame": 20}
        do_add_event(ledger, event, actor=actor, expected_version=0)
        do_freeze_ledger(ledger, actor=actor, attestation="I labelled this video alone.", expected_version=1)

    page = page_as(maintainer, f"/grading/packets/{packet.pk}/")
    errors = errors_of(page)
    page.wait_for_selector("#grading-versions")
    page.wait_for_load_state("networkidle")
    assert errors == []

    page = page_as(maintainer, f"/grading/packets/{packet.pk}/agreement/")
    errors = errors_of(page)
    page.wait_for_selector("table.kappa")
    assert "Cohen's kappa" in page.inner_text("table.kappa")
    assert errors == []
