"""The dashboard and the audit view across packets: states, counts, filters,
attestations, readable times, and nothing about packets the viewer does not maintain."""

from __future__ import annotations

import re

import pytest

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event, do_delete_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_publish_adjudicated_version
from annotator.models import Ledger
from annotator.reads.overview import SideProgress, packet_state
from tests.factories import client_for, make_maintainer, make_packet, make_ready_video, without_digests_and_times

ATTEST_A = "I labelled this video alone, from the video only (A)."
ATTEST_B = "I labelled this video alone, from the video only (B)."


def event(frame):
    return {"verb": "take", "nouns": ["cup"], "start_frame": frame, "end_frame": frame + 20}


def rows_by_title(html: str) -> dict[str, str]:
    found = {}
    for row in re.findall(r'<tr data-packet="\d+" data-state="[^"]+">.*?</tr>', html, flags=re.S):
        title = re.search(r'<a href="/packets/\d+/">([^<]+)</a>', row).group(1)
        found[title] = row
    return found


@pytest.fixture
def three_packets(maintainer, annotator_a, annotator_b, adjudicator):
    titles = ["untouched", "started", "published"]
    packets = {
        t: make_packet(maintainer, annotator_a, annotator_b, adjudicator, title=t, video=make_ready_video(t))
        for t in titles
    }
    started = Ledger.objects.get(packet=packets["started"], side="A")
    do_add_event(started, event(5), actor=annotator_a, expected_version=0)
    do_add_event(started, event(50), actor=annotator_a, expected_version=1)
    pub = packets["published"]
    a, b = (Ledger.objects.get(packet=pub, side=s) for s in "AB")
    do_add_event(a, event(5), actor=annotator_a, expected_version=0)
    gone = do_add_event(b, event(17171), actor=annotator_b, expected_version=0)
    do_delete_event(b, gone.uid, actor=annotator_b, expected_version=1)
    do_add_event(b, event(5), actor=annotator_b, expected_version=2)
    do_freeze_ledger(a, actor=annotator_a, attestation=ATTEST_A, expected_version=1)
    do_freeze_ledger(b, actor=annotator_b, attestation=ATTEST_B, expected_version=3)
    union = do_build_union(pub, actor=adjudicator)
    for item in union.items.all():
        do_decide_item(item, actor=adjudicator, action="take_a", rationale="agreed")
    do_publish_adjudicated_version(pub, actor=adjudicator)
    return packets


def test_packet_states_follow_the_protocol():
    idle, busy, done = SideProgress("a", 0, False), SideProgress("b", 3, False), SideProgress("c", 3, True)
    assert packet_state([idle, idle], False, False) == "assigned"
    assert packet_state([idle, busy], False, False) == "in progress"
    assert packet_state([done, idle], False, False) == "in progress"
    assert packet_state([done, done], False, False) == "frozen"
    assert packet_state([done, done], True, False) == "adjudicating"
    assert packet_state([done, done], True, True) == "published"


@pytest.mark.django_db
def test_dashboard_shows_state_counts_and_agreement_links(maintainer, three_packets, annotator_a):
    html = client_for(maintainer).get("/dashboard/").content.decode()
    rows = rows_by_title(html)
    assert set(rows) == {"untouched", "started", "published"}
    assert 'data-state="assigned"' in rows["untouched"]
    assert 'data-state="in progress"' in rows["started"] and "2 events" in rows["started"]
    assert 'data-state="published"' in rows["published"]
    assert f"/grading/packets/{three_packets['published'].pk}/agreement/" in rows["published"]
    assert "agreement</a>" not in rows["started"]
    filtered = client_for(maintainer).get("/dashboard/", {"state": "in progress"}).content.decode()
    assert set(rows_by_title(filtered)) == {"started"}
    by_person = client_for(maintainer).get("/dashboard/", {"person": annotator_a.pk}).content.decode()
    assert set(rows_by_title(by_person)) == {"untouched", "started", "published"}
    assert rows_by_title(client_for(maintainer).get("/dashboard/", {"person": maintainer.pk}).content.decode()) == {}


@pytest.mark.django_db
def test_a_maintainer_who_annotates_sees_nothing_of_that_packet_across_packets(
    maintainer, three_packets, annotator_a, annotator_b
):
    make_maintainer(annotator_b)
    client = client_for(annotator_b)
    dashboard = client.get("/dashboard/").content.decode()
    # B annotates all three; only the released (published) one is B's to maintain now.
    assert set(rows_by_title(dashboard)) == {"published"}
    audit = client.get("/audit/").content.decode()
    started = three_packets["started"]
    assert f"/packets/{started.pk}/" not in audit and "started</a>" not in audit
    assert client.get("/audit/", {"packet": started.pk}).content.decode().count("<tr data-operation") == 0


@pytest.mark.django_db
def test_audit_view_shows_attestations_readable_times_and_filters(maintainer, three_packets, annotator_a):
    client = client_for(maintainer)
    html = client.get("/audit/").content.decode()
    assert ATTEST_A in html and ATTEST_B in html
    # A deleted event's contents are not shown (digests and ISO times may hold any digits).
    assert "17171" not in without_digests_and_times(html)
    # One format on every page ("1 Dec 2026, 16:43 UTC"), on one line; the ISO time is the tooltip.
    cells = re.findall(r'<td class="nowrap" title="[^"]+">([^<]+)</td>', html)
    assert cells and all(re.fullmatch(r"\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC", c) for c in cells)
    freezes = client.get("/audit/", {"operation": "freeze_ledger"}).content.decode()
    assert freezes.count("<tr data-operation") == 2
    by_a = client.get("/audit/", {"person": annotator_a.pk}).content.decode()
    assert set(re.findall(r'<tr data-operation="([^"]+)"', by_a)) == {"add_event", "freeze_ledger"}
    one = client.get("/audit/", {"packet": three_packets["started"].pk}).content.decode()
    assert one.count("<tr data-operation") == 3  # created, two events
    future = client.get("/audit/", {"since": "2999-01-01T00:00"}).content.decode()
    assert future.count("<tr data-operation") == 0
    past = client.get("/audit/", {"until": "2000-01-01T00:00", "since": "nonsense"}).content.decode()
    assert past.count("<tr data-operation") == 0
