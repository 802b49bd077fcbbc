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

    # The home pages say who acts next too, not only "ready for adjudication" ("you" on the
    # adjudicator's own), and where adjudication stands.
    for person, who in ((adjudicator, "you"), (maintainer, "adjudicator")):
        home = page_as(person, "/")
        home.wait_for_selector("#packets tbody tr td[data-column=next]")
        row = f"#packets tbody tr:has(a[href='/packets/{packet.pk}/'])"
        step = home.inner_text(f"{row} td[data-column=next]")
        assert step == f"{who}: publish the ground truth (only the adjudicator can)", (person.username, step)
        assert home.inner_text(f"{row} td[data-column=status]") == "adjudicating: 4 of 4 item(s) decided"
    screenshot(home, "37-home-next-step.png", full_page=False)

    dashboard = page_as(maintainer, "/dashboard/")
    row = dashboard.locator(f"#dashboard-rows tr[data-packet='{packet.pk}']")
    assert "next: adjudicator: publish the ground truth" in row.inner_text()


def test_home_pages_say_where_adjudication_stands_and_you_to_the_one_who_acts(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = frozen_union(maintainer, annotator_a, annotator_b, adjudicator)
    decide_all_but(packet, adjudicator, left=1)
    row = f"#packets tbody tr:has(a[href='/packets/{packet.pk}/'])"
    shown = {}
    for person in (adjudicator, maintainer, annotator_a):
        home = page_as(person, "/")
        home.wait_for_selector(f"{row} td[data-column=next]")
        shown[person.username] = (
            home.inner_text(f"{row} td[data-column=status]"),
            home.inner_text(f"{row} td[data-column=next]"),
        )
        screenshot(home, f"37-home-{person.username}.png", full_page=False)
    assert shown == {
        "adjudicator": ("adjudicating: 3 of 4 item(s) decided", "you: decide 1 of 4 item(s)"),
        "maintainer": ("adjudicating: 3 of 4 item(s) decided", "adjudicator: decide 1 of 4 item(s)"),
        # An annotator hears only about their own ledger (blind to the other side).
        "annotator_a": ("frozen", "the adjudicator, once both ledgers are frozen: adjudicate and publish"),
    }
