"""Who holds the next step, wherever a packet's state is shown: the maintainer's packet
page, the dashboard, the maintainer's (read-only) adjudication view and the adjudicator's."""

from __future__ import annotations

import pytest

from annotator.actions.adjudication import do_decide_item
from annotator.models import UnionItem
from tests.browser.ledger_pages import screenshot, wait_ready
from tests.browser.test_keyboard_adjudication import frozen_union

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def decide_all_but(packet, adjudicator, left: int = 0) -> None:
    items = UnionItem.objects.filter(union__packet=packet).exclude(status="agreed").order_by("position")
    for item in list(items)[left:]:
        action = "take_a" if item.a_value else "take_b"
        do_decide_item(item, actor=adjudicator, action=action, rationale="Seen in the video.")


def test_every_page_says_the_adjudicator_publishes_once_all_is_decided(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator)
    decide_all_but(packet, adjudicator, left=1)

    boss = page_as(maintainer, f"/packets/{packet.pk}/")
    wait_ready(boss)
    assert boss.inner_text("#next-step") == "adjudicator: decide 1 of 4 item(s)"
    adj_page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(adj_page)
    assert adj_page.inner_text("#next-step") == "you: decide 1 of 4 item(s), then publish"

    decide_all_but(packet, adjudicator)
    boss.reload()
    wait_ready(boss)
    assert "4 of 4 decided" in boss.inner_text("#union-state")
    assert boss.inner_text("#next-step") == "adjudicator: publish the ground truth (only the adjudicator can)"

    follow = page_as(maintainer, f"/packets/{packet.pk}/adjudicate/")
    wait_ready(follow)
    assert follow.is_hidden("#publish")  # the maintainer cannot publish, and is told who can
    assert follow.inner_text("#next-step") == "adjudicator: publish the ground truth (only the adjudicator can)"

    # The home pages say who acts next too, not only "ready for adjudication".
    for person in (adjudicator, maintainer):
        home = page_as(person, "/")
        home.wait_for_selector("#packets tbody tr td[data-column=next]")
        step = home.inner_text(f"#packets tbody tr:has(a[href='/packets/{packet.pk}/']) td[data-column=next]")
        assert step == "adjudicator: publish the ground truth (only the adjudicator can)", (person.username, step)
    screenshot(home, "37-home-next-step.png", full_page=False)

    dashboard = page_as(maintainer, "/dashboard/")
    row = dashboard.locator(f"#dashboard-rows tr[data-packet='{packet.pk}']")
    assert "next: adjudicator: publish the ground truth" in row.inner_text()
