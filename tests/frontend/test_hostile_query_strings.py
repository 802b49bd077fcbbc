"""Query strings are input too: filters on the pages and the API's list routes never turn a
hostile value into a 500. A 30-digit ``?person=`` on ``/dashboard/`` reached SQLite as an
integer it cannot store (``OverflowError``); ids from query strings, forms and bodies now go
through ``annotator.base.urlconverters.parse_id``, the rule the URL converter applies."""

from __future__ import annotations

import pytest

from annotator.base.urlconverters import parse_id
from tests.factories import client_for

HUGE = "9" * 30
QUERIES = [
    f"?person={HUGE}",
    f"?project={HUGE}",
    f"?packet={HUGE}",
    f"?version={HUGE}",
    f"?page={HUGE}",
    "?person=-1&project=1.5",
    "?since=garbage&until=9999-99-99",
    "?state=%00&operation=" + "x" * 300,
    "?q=%ff%fe&format=csv",
    "?batch=" + "x" * 5000,
]


def urls(packet) -> list[str]:
    pk = packet.pk
    return [
        "/",
        "/dashboard/",
        "/audit/",
        f"/packets/{pk}/",
        "/api/packets/",
        "/api/videos/",
        f"/api/packets/{pk}/",
        f"/api/packets/{pk}/audit/",
        f"/api/packets/{pk}/ledger/",
        f"/api/packets/{pk}/submissions/",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("query", QUERIES)
def test_hostile_query_strings_never_cause_a_server_error(query, packet, maintainer, annotator_a, adjudicator):
    failures = []
    for user in (maintainer, annotator_a, adjudicator):
        client = client_for(user)
        for url in urls(packet):
            response = client.get(url + query)
            if response.status_code >= 500:
                failures.append((user.username, url, response.status_code))
    assert not failures


@pytest.mark.django_db
def test_the_dashboard_treats_an_id_no_column_can_hold_as_no_filter(packet, maintainer):
    response = client_for(maintainer).get(f"/dashboard/?person={HUGE}")
    assert response.status_code == 200
    assert packet.title in response.content.decode()


@pytest.mark.parametrize(
    "value, expected",
    [
        ("12", 12),
        (" 7 ", 7),
        (12, 12),
        ("9" * 18, 10**18 - 1),
        ("9" * 19, None),
        (10**18, None),
        (-1, None),
        ("-1", None),
        ("1.5", None),
        (1.5, None),
        (True, None),
        ("", None),
        (None, None),
        ("abc", None),
    ],
)
def test_parse_id_takes_what_the_url_converter_takes(value, expected):
    assert parse_id(value) == expected
