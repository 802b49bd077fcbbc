"""The dashboard past its window: the state counts and the state filter are the
database's over every packet, the page says it is windowed and reaches every row."""

from __future__ import annotations

import re

import pytest

from annotator.reads import overview
from tests.factories import client_for
from tests.frontend.test_dashboard_audit import rows_by_title, three_packets  # noqa: F401 (a fixture)


def counts_shown(html: str) -> dict[str, int]:
    line = re.search(r'<p class="small" id="state-counts">(.*?)</p>', html, flags=re.S).group(1)
    return {state: int(n) for state, n in re.findall(r"([a-z ]+): <strong>(\d+)</strong>", line.replace(" · ", ""))}


@pytest.mark.django_db
def test_dashboard_counts_every_packet_past_its_window(maintainer, three_packets, monkeypatch):  # noqa: F811
    monkeypatch.setattr(overview, "DASHBOARD_WINDOW", 1)
    client = client_for(maintainer)
    first = client.get("/dashboard/").content.decode()
    assert counts_shown(first) == {"assigned": 1, "in progress": 1, "frozen": 0, "adjudicating": 0, "published": 1}
    assert len(rows_by_title(first)) == 1
    assert "Windowed: page 1 of 3" in first and 'id="dashboard-next"' in first
    seen = set(rows_by_title(first))
    for page in (2, 3):
        html = client.get("/dashboard/", {"page": page}).content.decode()
        assert counts_shown(html) == counts_shown(first)
        seen |= set(rows_by_title(html))
    assert seen == {"untouched", "started", "published"}
    published = client.get("/dashboard/", {"state": "published"}).content.decode()
    assert set(rows_by_title(published)) == {"published"} and "Windowed" not in published


@pytest.mark.django_db
def test_dashboard_state_filter_is_the_databases(maintainer, three_packets):  # noqa: F811
    for state in overview.STATES:
        board = overview.dashboard(maintainer, state=state, window=1)
        assert [row.state for row in board.rows] == [state] * board.counts[state]
        assert board.total == board.counts[state]


@pytest.mark.django_db
def test_the_audit_view_reaches_every_entry_a_page_at_a_time(maintainer, three_packets, monkeypatch):  # noqa: F811
    monkeypatch.setattr(overview, "AUDIT_WINDOW", 4)
    client = client_for(maintainer)
    everything = list(overview.audit_entries(maintainer, limit=10_000))
    assert len(everything) > 8
    seen, page = [], 1
    while True:
        html = client.get("/audit/", {"page": page}).content.decode()
        rows = html.count("<tr data-operation")
        assert rows <= 4
        seen.append(rows)
        if 'id="audit-older"' not in html:
            break
        page += 1
    assert sum(seen) == len(everything) and page == -(-len(everything) // 4)
    assert 'id="audit-newer"' in html
