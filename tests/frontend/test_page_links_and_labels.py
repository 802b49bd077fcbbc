"""Issue 14: grading is reachable from the maintainer's packet page and the version page;
the favicon is served; the adjudication page has a waiting state before both freezes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import client_for
from tests.integrity.conftest import adjudicated, frozen  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def test_maintainer_packet_page_links_to_grading(packet, maintainer):
    page = client_for(maintainer).get(f"/packets/{packet.pk}/").content.decode()
    assert f'id="grading-link" href="{reverse("grading-packet", args=[packet.pk])}"' in page


def test_version_page_links_maintainers_to_its_leaderboard(packet, adjudicated, maintainer, adjudicator):  # noqa: F811
    url = f"/versions/{adjudicated.pk}/"
    grading = reverse("grading-version", args=[adjudicated.pk])
    assert f'id="grading-link" class="button" href="{grading}"' in client_for(maintainer).get(url).content.decode()
    # The adjudicator may read the version but not grade: no link to a page that is a 404 for them.
    assert grading not in client_for(adjudicator).get(url).content.decode()
    assert client_for(adjudicator).get(grading).status_code == 404


def test_every_page_names_a_favicon_that_is_served(client, maintainer):
    page = client_for(maintainer).get("/").content.decode()
    assert 'rel="icon"' in page and "favicon.svg" in page
    assert client.get("/favicon.ico", follow=True).status_code == 200
