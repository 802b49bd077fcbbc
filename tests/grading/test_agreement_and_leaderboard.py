"""The agreement report after both freezes, the human ceiling on the leaderboard, and
the leaderboard's sorting and exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.cache import cache

from annotator.models import AgreementReport, AuditEntry, VersionCalibration
from annotator.reads import grading as reads
from tests.factories import body_of, client_for
from tests.grading.conftest import A_EVENTS, EGOCENTRIC, fill_and_freeze, scored, upload


@pytest.mark.django_db
def test_the_agreement_report_compares_a_with_b_and_each_with_the_version(adjudicated, maintainer, adjudicator):
    packet = adjudicated.packet
    assert VersionCalibration.objects.get(version=adjudicated).status == "ok"  # computed on publish
    # Stored at the second freeze (no version yet) and again at the publication.
    assert list(AgreementReport.objects.order_by("id").values_list("version", flat=True)) == [None, adjudicated.pk]
    rows, entries = AgreementReport.objects.count(), AuditEntry.objects.count()
    body = client_for(maintainer).get(f"/api/packets/{packet.pk}/agreement/").json()
    assert body["scorer_id"] == "egocentric-f1-v2" and body["version"]["id"] == adjudicated.pk
    a_vs_b = body["a_vs_b"]
    # One exact match out of three events each way: precision = recall = 1/3.
    assert a_vs_b["a_as_prediction"]["reward"] == a_vs_b["b_as_prediction"]["reward"] == 0.333333
    assert a_vs_b["union"] == {"agreed": 1, "conflicting": 1, "a_only": 1, "b_only": 1}
    assert a_vs_b["kappa"] == {"verb": 1.0, "nouns": 1.0}
    assert a_vs_b["boundary_differences"]["start"]["histogram"] == {"0": 1, "20": 1}
    assert a_vs_b["unmatched"] == {"a": [2], "b": [2]}
    assert body["versus_version"]["A"]["reward"] == 1.0
    assert body["versus_version"]["B"]["reward"] == 0.333333
    assert body["versus_version"]["B"]["agreement"]["boundary_differences"]["end"]["histogram"] == {"0": 1, "-20": 1}

    # Asked again: the same stored report; the adjudicator may read it too. Reading writes nothing.
    again = client_for(adjudicator).get(f"/api/packets/{packet.pk}/agreement/").json()
    assert again["id"] == body["id"] == AgreementReport.objects.get(version=adjudicated).pk
    assert (AgreementReport.objects.count(), AuditEntry.objects.count()) == (rows, entries)


@pytest.mark.django_db
def test_reading_the_agreement_report_never_writes_even_when_none_is_stored(adjudicated, maintainer, monkeypatch):
    packet = adjudicated.packet
    stored = client_for(maintainer).get(f"/api/packets/{packet.pk}/agreement/").json()
    # The scoring library changed since the reports were stored: none matches any more.
    monkeypatch.setattr(reads, "scorer_code_sha256", lambda: "0" * 64)
    rows, entries = AgreementReport.objects.count(), AuditEntry.objects.count()
    body = client_for(maintainer).get(f"/api/packets/{packet.pk}/agreement/").json()
    assert body["id"] is None and body["created_at"] is None and body["scorer_code_sha256"] == "0" * 64
    unstored = {"id", "created_at", "scorer_code_sha256"}
    assert {k: v for k, v in body.items() if k not in unstored} == {
        k: v for k, v in stored.items() if k not in unstored
    }
    assert (AgreementReport.objects.count(), AuditEntry.objects.count()) == (rows, entries)


@pytest.mark.django_db
def test_no_agreement_report_before_both_freezes_and_never_for_annotators(packet, annotator_a, maintainer):
    fill_and_freeze(packet, "A", annotator_a, A_EVENTS)
    assert client_for(maintainer).get(f"/api/packets/{packet.pk}/agreement/").status_code == 404
    assert client_for(annotator_a).get(f"/api/packets/{packet.pk}/agreement/").status_code == 404
    assert not AgreementReport.objects.exists()


@pytest.mark.django_db
def test_the_leaderboard_puts_the_annotators_next_to_the_agents_sorts_and_exports(adjudicated, maintainer):
    rollouts = EGOCENTRIC / "calibration/rollouts"
    agents = {"empty": b'{"actions": []}', "claude": (rollouts / "claude-opus-4.8.solution.json").read_bytes()}
    agents["copy of A"] = b'{"actions": [{"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 200}]}'
    scored(adjudicated, upload(adjudicated.packet, maintainer, agents), maintainer)
    client = client_for(maintainer)
    url = f"/api/versions/{adjudicated.pk}/leaderboard/"
    board = client.get(url).json()
    rows = [(r["rank"], r["kind"], r["label"], r["reward"]) for r in board["rows"]]
    assert rows == [
        (1, "human", "annotator A (annotator_a)", 1.0),
        (2, "agent", "copy of A", 0.5),
        (3, "human", "annotator B (annotator_b)", 0.333333),
        (4, "agent", "claude", 0.0),
        (4, "agent", "empty", 0.0),
    ]
    assert [r["label"] for r in client.get(url, {"sort": "label"}).json()["rows"]] == [
        "annotator A (annotator_a)", "annotator B (annotator_b)", "claude", "copy of A", "empty",
    ]  # fmt: skip
    by_fp = client.get(url, {"sort": "-false_positives"}).json()["rows"]
    assert [r["false_positives"] for r in by_fp] == sorted((r["false_positives"] for r in by_fp), reverse=True)
    assert client.get(url, {"sort": "shoe_size"}).status_code == 400

    exported = client.get(f"/api/versions/{adjudicated.pk}/leaderboard.csv")
    assert exported["Content-Type"] == "text/csv" and "attachment" in exported["Content-Disposition"]
    table = list(csv.DictReader(io.StringIO(body_of(exported).decode())))
    assert [(r["label"], float(r["reward"]), r["precision"]) for r in table][:2] == [
        ("annotator A (annotator_a)", 1.0, "1.0"),
        ("copy of A", 0.5, "1.0"),
    ]
    as_json = json.loads(body_of(client.get(f"/api/versions/{adjudicated.pk}/leaderboard.json")))
    assert as_json["rows"] == board["rows"] and as_json["columns"][:4] == ["rank", "kind", "label", "reward"]


@pytest.mark.django_db
def test_the_leaderboard_scores_the_annotators_ledgers_once_not_on_every_request(adjudicated, maintainer, monkeypatch):
    cache.clear()  # scores kept by an earlier test with the same ledgers would hide the first scoring
    url = f"/api/versions/{adjudicated.pk}/leaderboard/"
    client = client_for(maintainer)
    first = client.get(url).json()
    assert [r["kind"] for r in first["rows"]] == ["human", "human"]

    def scored_again(*args, **kwargs):
        raise AssertionError("the annotators' ledgers were scored again")

    monkeypatch.setattr(reads, "score_submission", scored_again)
    assert client.get(url).json() == first
    # Another scorer is another question: it is scored (here: refused by the spy).
    with pytest.raises(AssertionError, match="scored again"):
        reads.human_rows(adjudicated, "egocentric-f1-v1")
