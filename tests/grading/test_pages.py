"""The grading pages are maintainers' pages (the agreement page also the adjudicator's)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.grading.conftest import EGOCENTRIC, scored, upload


def get(user, url):
    client = Client()
    client.force_login(user)
    return client.get(url)


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["annotator_a", "adjudicator", "outsider"])
def test_grading_pages_are_for_maintainers(gtea_version, maintainer, who, request):
    path = EGOCENTRIC / "calibration/rollouts/claude-opus-4.8.solution.json"
    score = scored(gtea_version, upload(gtea_version.packet, maintainer, {"claude": path.read_bytes()}), maintainer)[
        "claude"
    ]
    urls = [
        f"/grading/packets/{gtea_version.packet_id}/",
        f"/grading/versions/{gtea_version.pk}/",
        f"/grading/versions/{gtea_version.pk}/?scorer=egocentric-f1-v1",
        f"/grading/scores/{score.pk}/",
    ]
    for url in urls:
        response = get(maintainer, url)
        assert response.status_code == 200, url
        assert b'type="module"' in response.content
        assert get(request.getfixturevalue(who), url).status_code == 404, (who, url)
    assert get(maintainer, f"/grading/versions/{gtea_version.pk}/?scorer=hierarchical-bottleneck-v1").status_code == 404
    assert get(maintainer, f"/grading/packets/{gtea_version.packet_id}/agreement/").status_code == 200
    assert (
        get(request.getfixturevalue("adjudicator"), f"/grading/packets/{gtea_version.packet_id}/agreement/").status_code
        == 200
    )


@pytest.mark.django_db
def test_the_version_page_shows_the_anchors_to_maintainers_only(adjudicated, maintainer, adjudicator):
    url = f"/versions/{adjudicated.pk}/"
    assert b'id="calibration-card"' in get(maintainer, url).content
    response = get(adjudicator, url)
    assert response.status_code == 200 and b"calibration" not in response.content
