"""The grading pages in real Chromium while the work a freeze or a publication leaves for
after its commit is still queued: the agreement page and the calibration card say so, then
show the result once the task has run, without a reload by hand."""

from __future__ import annotations

import pytest

from annotator.actions.versions import do_import_provisional_version
from annotator.base import queue
from annotator.base.queue import AGREEMENT_REPORT, VERSION_CALIBRATION
from annotator.entry import tasks
from tests.factories import make_packet
from tests.grading.conftest import A_EVENTS, B_EVENTS
from tests.grading.test_derived_work import PROVISIONAL, fill, freeze

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def held(monkeypatch):
    """The tasks sent after commit, held here instead of the broker; the test runs them."""
    sent = []
    monkeypatch.setattr(queue, "send", lambda name, args, **options: sent.append((name, *args)))
    return sent


def test_the_agreement_page_says_the_report_is_queued_then_shows_it(
    page_as, maintainer, annotator_a, annotator_b, adjudicator, held
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    freeze(fill(packet, "A", annotator_a, A_EVENTS), annotator_a, A_EVENTS)
    freeze(fill(packet, "B", annotator_b, B_EVENTS), annotator_b, B_EVENTS)  # committed: its task is held
    [(name, job_id)] = held
    assert name == AGREEMENT_REPORT
    page = page_as(maintainer, f"/grading/packets/{packet.pk}/agreement/")
    page.wait_for_selector("#agreement[data-state=pending]")
    assert page.inner_text("#agreement") == f"The agreement report: queued, computed after the commit (job {job_id})."

    assert tasks.agreement_report(job_id) == "done"  # the worker's turn
    page.wait_for_selector("#agreement[data-state=ready]")
    text = page.inner_text("#agreement")
    assert "Annotator A vs annotator B" in text and "job" not in text


def test_the_calibration_card_says_the_anchors_are_queued_then_shows_them(page_as, maintainer, annotator_a,
                                                                          annotator_b, adjudicator, held):  # fmt: skip
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator)
    version = do_import_provisional_version(
        packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="0" * 64
    )
    [(name, job_id)] = held
    assert name == VERSION_CALIBRATION
    page = page_as(maintainer, f"/grading/versions/{version.pk}/")
    page.wait_for_selector("#grading-version[data-state=ready]")
    assert page.get_attribute("#calibration", "data-job") == "queued"
    assert page.inner_text("#calibration [data-field=calibration-job]") == (
        f"The calibration anchors: queued, computed after the commit (job {job_id})."
    )
    assert "reference anchors: queued" in page.inner_text("#leaderboard [data-field=status]")

    assert tasks.version_calibration(job_id) == "done"
    page.wait_for_selector('#calibration[data-job=""] tr[data-anchor="oracle"]')
    assert page.locator("#calibration [data-field=calibration-job]").count() == 0
    assert page.inner_text('#calibration tr[data-anchor="oracle"] td:nth-child(2)') == "1"
    page.wait_for_selector('#leaderboard tr[data-label="anchor/oracle"]')  # the reference rows came too
    assert "queued" not in page.inner_text("#leaderboard [data-field=status]")
