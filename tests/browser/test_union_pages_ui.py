"""The adjudication page over a union larger than one page of the union API: every item is
read, page after page, in order, and the progress counts all of them."""

from __future__ import annotations

import pytest

from annotator.actions.union import do_build_union
from annotator.models import Decision, UnionItem
from annotator.reads.access import UNION_PAGE_SIZE
from tests.browser.ledger_pages import wait_ready
from tests.factories import make_packet, make_ready_video
from tests.workflow.large_ledgers import FRAMES, frozen_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_every_item_of_a_union_of_several_pages_is_on_the_page(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("pages", frame_count=FRAMES)
    )
    frozen_pair(packet, 2 * UNION_PAGE_SIZE + 40, every=100)
    do_build_union(packet, actor=adjudicator)
    count = UnionItem.objects.filter(union__packet=packet).count()
    assert count > 2 * UNION_PAGE_SIZE
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    positions = page.evaluate("() => window.frameledger.union().map((item) => item.position)")
    assert positions == list(range(count))
    needed = UnionItem.objects.filter(union__packet=packet).exclude(status="agreed").count()
    agreed = count - needed
    assert page.inner_text("#progress-text") == f"0 of {needed} decided · {agreed} agreed · {count} items"
    assert not Decision.objects.filter(item__union__packet=packet).exists()
