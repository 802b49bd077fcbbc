"""The leaderboard a page at a time, ranked by the database over every row; its downloads
streamed; the scoring run polled without its scores: each costs the same number of queries
whatever the number of submissions (issue 38)."""

from __future__ import annotations

import csv
import io
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test import AsyncClient
from django.test.utils import CaptureQueriesContext

from annotator.models import SubmissionScore
from tests.factories import body_of, client_for
from tests.grading.conftest import scored, upload

# Three rewards against the ``adjudicated`` fixture's version: 0.5, 0.0 and 0.0 (see
# test_agreement_and_leaderboard); cycled, they make ties that straddle every page.
HALF = b'{"actions": [{"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 200}]}'
EMPTY = b'{"actions": []}'
NOT_JSON = b"{actions: oops"
CONTENTS = (HALF, EMPTY, NOT_JSON)


def add_agents(version, maintainer, first: int, count: int) -> None:
    named = {f"agent-{k:03d}": CONTENTS[k % len(CONTENTS)] for k in range(first, first + count)}
    scored(version, upload(version.packet, maintainer, named), maintainer)


def every_page(client, url: str, **params) -> list[list[dict]]:
    pages, body = [], client.get(url, params).json()
    pages.append(body["rows"])
    while body["next"]:
        body = client.get(body["next"]).json()
        pages.append(body["rows"])
    return pages


def competition_ranks(rewards: list[float | None]) -> list[int | None]:
    present = [r for r in rewards if r is not None]
    return [None if r is None else 1 + sum(1 for other in present if other > r) for r in rewards]


def queries(client, url: str, **params) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, params)
        assert response.status_code == 200, response.content[:300]
        body_of(response)  # a streamed body runs its queries as it is read
    return len(captured)


@pytest.mark.django_db
def test_the_leaderboard_comes_a_page_at_a_time_with_ranks_right_across_pages(adjudicated, maintainer):
    add_agents(adjudicated, maintainer, 0, 13)
    client = client_for(maintainer)
    url = f"/api/versions/{adjudicated.pk}/leaderboard/"
    whole = client.get(url, {"page_size": 1000}).json()
    assert whole["count"] == 15 and whole["next"] is None and len(whole["rows"]) == 15  # 13 agents, 2 humans
    rewards = [r["reward"] for r in whole["rows"]]
    assert rewards == sorted(rewards, reverse=True) and len(set(rewards)) < len(rewards)  # ties
    assert [r["rank"] for r in whole["rows"]] == competition_ranks(rewards)
    for sort in ("-reward", "rank", "label", "-label", "-precision", "scored_at", "kind", "-reason"):
        pages = every_page(client, url, sort=sort, page_size=2)
        assert len(pages) == 8 and all(len(p) == 2 for p in pages[:-1]) and len(pages[-1]) == 1
        rows = [row for page in pages for row in page]
        assert [r["label"] for r in rows] == [r["label"] for r in client.get(url, {"sort": sort}).json()["rows"]]
        assert sorted(r["label"] for r in rows) == sorted(r["label"] for r in whole["rows"])  # each row once
        by_label = {r["label"]: r["rank"] for r in whole["rows"]}
        assert all(r["rank"] == by_label[r["label"]] for r in rows), sort  # a rank never depends on its page
    labels = [r["label"] for r in client.get(url, {"sort": "label", "page_size": 1000}).json()["rows"]]
    assert labels == sorted(labels)


@pytest.mark.django_db
def test_a_cursor_of_another_sort_or_a_forged_one_is_a_clear_400(adjudicated, maintainer):
    add_agents(adjudicated, maintainer, 0, 4)
    client = client_for(maintainer)
    url = f"/api/versions/{adjudicated.pk}/leaderboard/"
    cursor = parse_qs(urlsplit(client.get(url, {"page_size": 2}).json()["next"]).query)["cursor"][0]
    for params in ({"sort": "label", "cursor": cursor}, {"cursor": "not-a-cursor"}, {"page_size": "0"}):
        response = client.get(url, params)
        assert response.status_code == 400, (params, response.content)
    assert client.get(url, {"cursor": cursor}).status_code == 200


@pytest.mark.django_db
def test_the_downloads_hold_every_row_in_order_streamed(adjudicated, maintainer):
    add_agents(adjudicated, maintainer, 0, 7)
    client = client_for(maintainer)
    every = client.get(f"/api/versions/{adjudicated.pk}/leaderboard/", {"page_size": 1000}).json()["rows"]
    exported = client.get(f"/api/versions/{adjudicated.pk}/leaderboard.csv")
    assert exported.streaming and exported["Content-Type"] == "text/csv"
    table = list(csv.DictReader(io.StringIO(body_of(exported).decode())))
    assert {r["kind"] for r in table[len(every) :]} == {"reference"}  # the version's anchors, last
    table = table[: len(every)]
    assert [r["label"] for r in table] == [r["label"] for r in every]
    assert [r["rank"] for r in table] == ["" if r["rank"] is None else str(r["rank"]) for r in every]
    as_json = client.get(f"/api/versions/{adjudicated.pk}/leaderboard.json")
    assert as_json.streaming and json.loads(body_of(as_json))["rows"] == every


@pytest.mark.django_db
def test_the_leaderboard_and_its_csv_cost_the_same_queries_at_two_sizes(adjudicated, maintainer):
    client = client_for(maintainer)
    page = f"/api/versions/{adjudicated.pk}/leaderboard/"
    csv_url = f"/api/versions/{adjudicated.pk}/leaderboard.csv"
    add_agents(adjudicated, maintainer, 0, 6)
    queries(client, page)  # the human rows scored once and cached
    small = (
        queries(client, page, page_size=3),
        queries(client, page, page_size=3, sort="label"),
        queries(client, csv_url),
    )
    add_agents(adjudicated, maintainer, 6, 30)
    large = (
        queries(client, page, page_size=3),
        queries(client, page, page_size=3, sort="label"),
        queries(client, csv_url),
    )
    assert small == large


@pytest.mark.django_db
def test_the_polled_run_answers_its_counts_not_its_scores_and_the_scores_come_in_pages(adjudicated, maintainer):
    client = client_for(maintainer)
    runs = []
    for first, count in ((0, 4), (4, 24)):
        named = {f"agent-{k:03d}": CONTENTS[k % len(CONTENTS)] for k in range(first, first + count)}
        results = scored(adjudicated, upload(adjudicated.packet, maintainer, named), maintainer)
        runs.append(next(iter(results.values())).run_id)
    costs = []
    for run_id, count in zip(runs, (4, 24), strict=True):
        url = f"/api/scoring-runs/{run_id}/"
        body = client.get(url).json()
        assert body["counts"]["pending"] == 0 and sum(body["counts"].values()) == count
        assert body["scores"].endswith(f"{url}scores/")  # a link, not the scores
        pages = [client.get(body["scores"], {"page_size": 5}).json()]
        while pages[-1]["next"]:
            pages.append(client.get(pages[-1]["next"]).json())
        ids = [s["id"] for p in pages for s in p["results"]]
        assert len(ids) == count and ids == sorted(ids)
        costs.append((queries(client, url), queries(client, f"{url}scores/", page_size=3)))
    assert costs[0] == costs[1]


@pytest.mark.django_db
def test_the_count_comes_with_the_ranks_never_from_a_pass_of_its_own(adjudicated, maintainer):
    add_agents(adjudicated, maintainer, 0, 7)
    client = client_for(maintainer)
    url = f"/api/versions/{adjudicated.pk}/leaderboard/"
    for sort in ("-reward", "label"):
        with CaptureQueriesContext(connection) as captured:
            body = client.get(url, {"page_size": 3, "sort": sort}).json()
        passes = [q["sql"] for q in captured if '"annotator_submissionscore"' in q["sql"]]
        assert not [sql for sql in passes if sql.startswith('SELECT COUNT(*) AS "__count"')]
        assert body["count"] == 9 and len(body["rows"]) == 3  # 7 agents, 2 humans
    whole = client.get(url, {"page_size": 1000, "sort": "label"}).json()
    assert whole["count"] == 9 == len(whole["rows"])
    ranks = competition_ranks([r["reward"] for r in whole["rows"]])
    assert [r["rank"] for r in whole["rows"]] == ranks


@pytest.mark.django_db
def test_a_submission_scored_twice_shows_its_newest_final_score_once(adjudicated, maintainer):
    batch = upload(adjudicated.packet, maintainer, {"twice": HALF, "once": EMPTY})
    first = scored(adjudicated, batch, maintainer)
    second = scored(adjudicated, [s for s in batch if s.label == "twice"], maintainer)
    assert SubmissionScore.objects.filter(submission__label="twice").count() == 2
    rows = client_for(maintainer).get(f"/api/versions/{adjudicated.pk}/leaderboard/", {"page_size": 1000}).json()
    agents = {r["label"]: r["result"] for r in rows["rows"] if r["kind"] != "human"}
    assert agents == {"twice": second["twice"].pk, "once": first["once"].pk} and rows["count"] == 4


@pytest.mark.django_db(transaction=True)
def test_the_csv_streams_as_each_server_kind_reads_it(adjudicated, maintainer):
    """Under ASGI an asynchronous iterator (a synchronous one would be read whole before the
    first byte); under WSGI a synchronous one (an asynchronous one would be gathered whole)."""
    add_agents(adjudicated, maintainer, 0, 4)
    url = f"/api/versions/{adjudicated.pk}/leaderboard.csv"
    wsgi = client_for(maintainer).get(url)
    assert wsgi.streaming and not wsgi.is_async
    asgi_client = AsyncClient()
    asgi_client.force_login(maintainer)

    async def fetch():
        response = await asgi_client.get(url)
        return response, b"".join([piece async for piece in response.streaming_content])

    answer, body = async_to_sync(fetch)()
    assert answer.status_code == 200 and answer.is_async
    assert body == body_of(wsgi)
