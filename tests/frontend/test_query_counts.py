"""Each page and list a person opens costs the same number of queries whatever the data:
measured at one size, then again after packets in every state, people and projects were
added (SQLite here, PostgreSQL on the suite's PostgreSQL pass)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event
from annotator.actions.people import do_invite_person
from annotator.actions.projects import do_create_project
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_publish_adjudicated_version
from annotator.models import Ledger, TaskKind
from tests.factories import client_for, make_packet, make_ready_video
from tests.workflow.large_ledgers import FRAMES, frozen_pair

pytestmark = pytest.mark.django_db

PAGES = {  # who opens it: the page or API route
    "maintainer": ["/api/packets/", "/dashboard/", "/people/", "/projects/", "/dashboard/?state=published", "/audit/"],
    "annotator_a": ["/api/packets/"],
    "adjudicator": ["/api/packets/"],
}


def grow(people: dict, round_: int) -> None:
    """Four packets (assigned, in progress, adjudicating, published), a person, a project."""
    cast = (people["maintainer"], people["annotator_a"], people["annotator_b"], people["adjudicator"])

    def packet(state: str):
        video = make_ready_video(f"{state} {round_}", frame_count=FRAMES)
        return make_packet(*cast, title=f"{state} {round_}", video=video)

    packet("assigned")
    started = Ledger.objects.get(packet=packet("in progress"), side="A")
    do_add_event(started, {"verb": "take", "nouns": ["cup"], "start_frame": 1, "end_frame": 9}, actor=cast[1],
                 expected_version=0)  # fmt: skip
    deciding = packet("adjudicating")
    frozen_pair(deciding, 3, every=2)
    do_build_union(deciding, actor=cast[3])
    published = packet("published")
    frozen_pair(published, 3, every=2)
    for item in do_build_union(published, actor=cast[3]).items.exclude(status="agreed"):
        do_decide_item(item, actor=cast[3], action="take_a" if item.a_value else "drop", rationale="checked")
    do_publish_adjudicated_version(published, actor=cast[3])
    person, _ = do_invite_person(actor=cast[0], username=f"person{round_}", roles=["annotator"])
    do_create_project(
        actor=cast[0], title=f"project {round_}", task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotators=[cast[1], cast[2], person], adjudicators=[cast[3]],
    )  # fmt: skip


def queries(people: dict) -> dict[tuple[str, str], int]:
    found = {}
    for who, paths in PAGES.items():
        client = client_for(people[who])
        for path in paths:
            with CaptureQueriesContext(connection) as captured:
                response = client.get(path)
            assert response.status_code == 200, (who, path, response.status_code)
            found[who, path] = len(captured)
    return found


def test_every_page_costs_the_same_queries_at_two_sizes(maintainer, annotator_a, annotator_b, adjudicator):
    people = {"maintainer": maintainer, "annotator_a": annotator_a, "annotator_b": annotator_b,
              "adjudicator": adjudicator}  # fmt: skip
    grow(people, 0)
    small = queries(people)
    for round_ in (1, 2, 3):
        grow(people, round_)
    assert queries(people) == small
