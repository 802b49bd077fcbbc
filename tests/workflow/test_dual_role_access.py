"""A maintainer who is also annotator or adjudicator on a packet is judged by that role.

Issue 10, item 1: the grading routes asked "is this person a maintainer?" instead of
"what is this person's role on this packet?", so a maintainer annotating a packet read
its provisional ground truth through another maintainer's scores, runs, submissions
and jobs. The whole URL × role × state walk is ``test_blindness_matrix.py`` (cast
``dual``); these name each hole once.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from annotator.entry.routing import websocket_urlpatterns
from annotator.reads import access
from tests.factories import client_for, make_maintainer
from tests.workflow.test_blindness_matrix import PROVISIONAL_FRAMES, build_scenario

NOT_FOUND = {"error": {"code": "not_found", "message": "Not found."}}


def users_of(annotator_a, annotator_b, adjudicator, maintainer):
    return {
        "annotator_a": annotator_a,
        "annotator_b": annotator_b,
        "adjudicator": adjudicator,
        "maintainer": maintainer,
    }


@pytest.fixture
def dual(packet, annotator_a, annotator_b, adjudicator, maintainer):
    """Annotator A and the adjudicator are maintainers too; the submissions and runs are
    the other maintainer's."""
    make_maintainer(annotator_a)
    make_maintainer(adjudicator)
    return build_scenario("both_frozen", packet, users_of(annotator_a, annotator_b, adjudicator, maintainer))


def grading_urls(scenario) -> list[str]:
    grading = scenario["grading"]
    return [
        f"/api/scores/{grading['score_id']}/diagnostics/",
        f"/api/scores/{grading['score_id']}/",
        f"/api/scores/{grading['score_id']}/files/reward.json",
        f"/api/scores/{grading['score_id']}/files/details.json",
        f"/api/scoring-runs/{grading['run_id']}/",
        f"/api/submissions/{grading['submission_id']}/",
        f"/api/submissions/{grading['submission_id']}/content/",
        f"/api/jobs/{scenario['scoring_job'].pk}/",
    ]


def refused(user, url) -> bool:
    response = client_for(user).get(url)
    return response.status_code == 404 and response.json() == NOT_FOUND


@pytest.mark.django_db
def test_maintainer_annotator_cannot_read_score_diagnostics(dual, annotator_a, maintainer):
    url = f"/api/scores/{dual['grading']['score_id']}/diagnostics/"
    assert refused(annotator_a, url)
    # The other maintainer reads it, with the provisional reference in it.
    body = client_for(maintainer).get(url).content.decode()
    assert str(PROVISIONAL_FRAMES[0]) in body


@pytest.mark.django_db
def test_maintainer_annotator_cannot_read_scores_runs_submissions_or_jobs(dual, annotator_a, maintainer):
    for url in grading_urls(dual):
        assert refused(annotator_a, url), url
        assert client_for(maintainer).get(url).status_code == 200, url


@pytest.mark.django_db
def test_maintainer_adjudicator_cannot_read_scores_runs_submissions_or_jobs(dual, adjudicator):
    for url in grading_urls(dual):
        assert refused(adjudicator, url), url


@pytest.mark.django_db
def test_maintainer_adjudicator_cannot_read_the_grading_pages(dual, adjudicator, maintainer):
    score_page = f"/grading/scores/{dual['grading']['score_id']}/"
    assert client_for(adjudicator).get(score_page).status_code == 404
    assert client_for(maintainer).get(score_page).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_maintainer_annotator_cannot_follow_a_scoring_job_socket(dual, annotator_a, maintainer):
    async def connect(user):
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{dual['scoring_job'].pk}/")
        communicator.scope["user"] = user
        connected, code = await communicator.connect()
        if connected:
            await communicator.disconnect()
        return connected, code

    assert async_to_sync(connect)(annotator_a) == (False, 4404)
    assert async_to_sync(connect)(maintainer)[0] is True


@pytest.mark.django_db
def test_maintainer_adjudicator_stays_blind_to_grading_after_publication(
    packet, annotator_a, annotator_b, adjudicator, maintainer
):
    make_maintainer(adjudicator)
    scenario = build_scenario("published", packet, users_of(annotator_a, annotator_b, adjudicator, maintainer))
    assert access.role_on_packet(adjudicator, packet) == "adjudicator"
    for url in grading_urls(scenario):
        assert refused(adjudicator, url), url
    assert refused(adjudicator, f"/api/versions/{scenario['provisional'].pk}/")


@pytest.mark.django_db
def test_maintainer_annotator_is_a_maintainer_on_the_packet_once_an_adjudicated_version_is_published(
    packet, annotator_a, annotator_b, adjudicator, maintainer
):
    make_maintainer(annotator_a)
    scenario = build_scenario("both_frozen", packet, users_of(annotator_a, annotator_b, adjudicator, maintainer))
    # Both ledgers frozen, nothing published yet: still blind.
    assert access.role_on_packet(annotator_a, packet) == "annotator_a"
    assert refused(annotator_a, f"/api/versions/{scenario['provisional'].pk}/")
    from annotator.actions.versions import do_publish_adjudicated_version

    do_publish_adjudicated_version(packet, actor=adjudicator)
    assert access.role_on_packet(annotator_a, packet) == "maintainer"
    for url in grading_urls(scenario):
        assert client_for(annotator_a).get(url).status_code == 200, url
    # A plain annotator stays an annotator.
    assert access.role_on_packet(annotator_b, packet) == "annotator_b"
    assert refused(annotator_b, f"/api/versions/{scenario['provisional'].pk}/")
