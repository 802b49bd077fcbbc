"""Every row a person attests to or a leaderboard shows, tampered by SQL with the triggers
switched off, one column at a time: each read answers the audited ``integrity_error`` and
``verify_integrity`` names the row and exits 1. With the triggers in place, each UPDATE and
DELETE is refused by the database (SQLite here, PostgreSQL on the suite's PostgreSQL pass).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.models import (
    AuditEntry,
    Decision,
    GroundTruthVersion,
    LedgerEvent,
    SubmissionScore,
)
from annotator.reads.integrity import describe
from tests.factories import client_for, make_packet
from tests.grading.conftest import upload
from tests.integrity.conftest import AGENT, PROVISIONAL
from tests.integrity.tampering import refused, remove, tamper, triggers_off, verify

pytestmark = pytest.mark.django_db


def reads(graded, packet) -> dict[str, list[str]]:
    """Where each sealed row is read (maintainer's URLs)."""
    p, v, prov = packet.pk, graded["adjudicated"].pk, graded["provisional"].pk
    s, r, x = graded["submission"].pk, graded["run"].pk, graded["score"].pk
    return {
        "ledger": [f"/api/packets/{p}/ledgers/A/"],
        "adjudicated": [f"/api/versions/{v}/", f"/api/versions/{v}/export/?file=gt.json"],
        "provisional": [f"/api/versions/{prov}/", f"/api/packets/{p}/versions/"],
        "decision": [f"/api/packets/{p}/union/"],
        "submission": [f"/api/submissions/{s}/", f"/api/submissions/{s}/content/", f"/api/scores/{x}/"],
        "run": [f"/api/scoring-runs/{r}/", f"/api/packets/{p}/scoring-runs/", f"/api/scores/{x}/"],
        "score": [
            f"/api/scores/{x}/",
            f"/api/versions/{prov}/leaderboard/",
            f"/api/versions/{prov}/leaderboard.csv",
            f"/api/scoring-runs/{r}/scores/",
            f"/api/submissions/{s}/",
        ],
    }


LATER = timezone.now() + timedelta(days=3)
# (row, column, new value): every column of every sealed row, one at a time.
COLUMNS = [
    ("ledger", "attestation", "I never saw this video at all, honestly."),
    ("ledger", "version", 99),
    ("ledger", "frozen_at", LATER),
    ("adjudicated", "changelog", {"previous": None, "added": 0}),
    ("adjudicated", "source", "somewhere else"),
    ("adjudicated", "number", 7),
    # (packet, tier, number) is unique and both tiers hold a v1 here: the flip takes another
    # number too; the lone flip is test_tier_flipped_by_sql_never_releases_the_provisional_key.
    ("adjudicated", "tier", ("provisional", 50)),
    ("adjudicated", "created_at", LATER),
    ("provisional", "tier", ("adjudicated", 50)),
    ("provisional", "source", "another labeller"),
    ("decision", "action", "drop"),
    ("decision", "final_value", {"verb": "cut", "nouns": ["bagel"], "start_frame": 1, "end_frame": 2}),
    ("decision", "rationale", "changed by hand"),
    ("decision", "decided_at", LATER),
    ("submission", "label", "someone else"),
    ("submission", "original_name", "other.json"),
    ("submission", "sha256", "0" * 64),
    ("submission", "content", AGENT.replace(b"take", b"open")),
    ("submission", "size_bytes", 1),
    ("submission", "uploaded_at", LATER),
    ("run", "scorer_id", "egocentric-f1-v1"),
    ("run", "params", {"tolerance": 99}),
    ("run", "ground_truth_sha256", "0" * 64),
    ("run", "total", 5),
    ("run", "finished_at", LATER),
    ("score", "reward", 0.0123),
    ("score", "reason", "changed"),
    ("score", "details", {"f1": 1.0}),
    ("score", "reward_json", b'{"reward": 0.0123}'),
    ("score", "reward_txt", b"0.0123"),
    ("score", "details_json", b"{}"),
    ("score", "status", "error"),
    ("score", "scored_at", LATER),
]


def fresh_decider(decision):
    return Decision.objects.select_related("decided_by").get(pk=decision.pk).decided_by


def assert_integrity_error(client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 500, (url, response.status_code, response.content[:300])
    assert response.json()["error"]["code"] == "integrity_error", url


def test_untouched_rows_read_and_verify(graded, packet, maintainer):
    client = client_for(maintainer)
    for urls in reads(graded, packet).values():
        for url in urls:
            assert client.get(url).status_code == 200, url
    code, out = verify("--rescore")
    assert code == 0, out
    assert "re-scored 1 score(s)" in out


@pytest.mark.parametrize(("row", "column", "value"), COLUMNS, ids=[f"{r}.{c}" for r, c, _ in COLUMNS])
def test_each_column_changed_is_an_integrity_error_and_named(graded, packet, maintainer, row, column, value):
    obj = graded[row]
    before = AuditEntry.objects.filter(operation="integrity_error").count()
    tamper(obj, **({"tier": value[0], "number": value[1]} if column == "tier" else {column: value}))
    client = client_for(maintainer)
    for url in reads(graded, packet)[row]:
        assert_integrity_error(client, url)
    if row == "decision":  # the next publication would use it: its preview and the publish refuse
        adjudicator = client_for(fresh_decider(obj))
        assert_integrity_error(adjudicator, f"/api/packets/{packet.pk}/publish/")
        response = adjudicator.post(f"/api/packets/{packet.pk}/publish/")
        assert response.status_code == 500 and response.json()["error"]["code"] == "integrity_error"
    assert AuditEntry.objects.filter(operation="integrity_error").count() > before  # audited
    code, out = verify()
    assert code == 1, out
    fresh = type(obj).objects.get(pk=obj.pk)
    assert f"PROBLEM {describe(fresh)}" in out, out


def test_frozen_ledger_event_rows_changed_added_or_removed(graded, packet, annotator_a, maintainer):
    ledger = graded["ledger"]
    own, side = client_for(annotator_a), client_for(maintainer)
    assert own.get(f"/api/packets/{packet.pk}/ledger/").status_code == 200
    event = LedgerEvent.objects.filter(ledger=ledger).order_by("pk").first()
    cut = {**event.data, "verb": "cut"}
    for change in ("update", "insert", "delete"):
        with triggers_off(LedgerEvent._meta.db_table):
            if change == "update":
                LedgerEvent.objects.filter(pk=event.pk).update(data=cut)
            elif change == "insert":
                LedgerEvent.objects.filter(pk=event.pk).update(data=event.data)
                LedgerEvent.objects.bulk_create([LedgerEvent(ledger=ledger, uid=uuid.uuid4(), data=cut)])
            else:
                LedgerEvent.objects.filter(ledger=ledger, data=cut).delete()
                LedgerEvent.objects.filter(pk=event.pk).delete()
        assert_integrity_error(own, f"/api/packets/{packet.pk}/ledger/")
        assert_integrity_error(side, f"/api/packets/{packet.pk}/ledgers/A/")
        code, out = verify()
        assert code == 1 and f"PROBLEM {describe(ledger)}: its event rows differ" in out, (change, out)


@pytest.mark.parametrize("column", ["uid", "created_at", "updated_at"])
def test_a_frozen_ledger_events_uid_or_times_changed_are_named(graded, packet, annotator_a, maintainer, column):
    # The content is the same, but the owner's view would serve another uid (what edits and
    # decisions name) or another order: the seal of the rows the freeze recorded differs.
    ledger = graded["ledger"]
    event = LedgerEvent.objects.filter(ledger=ledger).order_by("pk").first()
    value = uuid.uuid4() if column == "uid" else getattr(event, column) - timedelta(days=400)
    with triggers_off(LedgerEvent._meta.db_table):
        LedgerEvent.objects.filter(pk=event.pk).update(**{column: value})
    assert_integrity_error(client_for(annotator_a), f"/api/packets/{packet.pk}/ledger/")
    assert_integrity_error(client_for(maintainer), f"/api/packets/{packet.pk}/ledgers/A/")
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(ledger)}: its event rows differ from the seal its freeze" in out, out


def test_rows_moved_to_another_packet_or_deleted_are_named(graded, packet, maintainer, annotator_a, annotator_b):
    other = make_packet(maintainer, annotator_a, annotator_b, graded["decision"].decided_by)
    submission = graded["submission"]
    tamper(submission, packet_id=other.pk)
    assert_integrity_error(client_for(maintainer), f"/api/submissions/{submission.pk}/")
    tamper(submission, packet_id=packet.pk)
    version, ledger = graded["adjudicated"], graded["ledger"]
    tamper(version, packet_id=other.pk)  # its manifest names its packet
    assert_integrity_error(client_for(maintainer), f"/api/versions/{version.pk}/")
    tamper(version, packet_id=packet.pk)
    tamper(ledger, annotator_id=maintainer.pk)  # its seal names its annotator
    assert_integrity_error(client_for(maintainer), f"/api/packets/{packet.pk}/ledgers/A/")
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(ledger)}: its columns differ from the seal" in out
    tamper(ledger, annotator_id=annotator_a.pk)
    score, decision = graded["score"], graded["decision"]
    remove(score)
    remove(decision)
    code, out = verify()
    assert code == 1
    assert f"PROBLEM score {score.pk}: recorded in the audit log, now missing (deleted)" in out
    assert f"PROBLEM decision {decision.pk}: recorded in the audit log, now missing (deleted)" in out


def test_a_score_made_final_by_sql_is_named(graded, packet, maintainer):
    # A pending score passes the trigger once: written by hand, it carries no seal.
    run = graded["run"]
    [second] = upload(packet, maintainer, {"second": AGENT})
    pending = SubmissionScore.objects.create(
        run=run, submission=second, version=graded["provisional"], scorer_id=run.scorer_id
    )
    SubmissionScore.objects.filter(pk=pending.pk).update(status="scored", reward=1.0)
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(pending)}: no seal for it in the audit log" in out


def test_rescore_finds_reward_bytes_that_the_submission_does_not_give(graded):
    score = graded["score"]
    # Reward and its seal are both rewritten (as a full rewrite would): only re-scoring shows it.
    tamper(score, reward_json=b'{"reward":0.5}')
    code, out = verify("--rescore", "--sample", "1", "--seed", "3")
    assert code == 1
    assert f"PROBLEM {describe(score)}: re-scoring gives other reward.json" in out


def test_tier_flipped_by_sql_never_releases_the_provisional_key(provisional, packet, annotator_a, maintainer):
    client = client_for(annotator_a)
    url = f"/api/versions/{provisional.pk}/export/?file=gt.json"
    assert client.get(url).status_code == 404
    tamper(provisional, tier=GroundTruthVersion.Tier.ADJUDICATED)
    assert_integrity_error(client, url)
    assert_integrity_error(client, f"/api/versions/{provisional.pk}/")
    assert_integrity_error(client, f"/api/packets/{packet.pk}/versions/")
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(GroundTruthVersion.objects.get(pk=provisional.pk))}: tier differs" in out


def test_ledger_unfrozen_by_sql_is_not_writable_again(graded, packet, annotator_a):
    ledger = graded["ledger"]
    tamper(ledger, frozen_at=None)
    client = client_for(annotator_a)
    assert_integrity_error(client, f"/api/packets/{packet.pk}/ledger/")
    code, out = verify()
    assert code == 1 and f"ledger {ledger.pk}: frozen in the audit log, now missing or unfrozen" in out


# ----------------------------------------------------------------------- the triggers


def test_triggers_refuse_every_update_and_delete_of_sealed_rows(graded, packet):
    event = LedgerEvent.objects.filter(ledger=graded["ledger"]).first()
    s, r, x, d = graded["submission"].pk, graded["run"].pk, graded["score"].pk, graded["decision"]
    other_item = d.item.union.items.exclude(pk=d.item_id).first()
    refused("UPDATE annotator_ledgerevent SET data = %s WHERE id = %s", ['{"verb":"cut"}', event.pk])
    refused("DELETE FROM annotator_ledgerevent WHERE id = %s", [event.pk])
    refused(
        "INSERT INTO annotator_ledgerevent (ledger_id, uid, data, created_at, updated_at) VALUES (%s, %s, %s, %s, %s)",
        [graded["ledger"].pk, uuid.uuid4().hex, "{}", timezone.now(), timezone.now()],
    )
    for column, value in (("label", "x"), ("content", b"x"), ("sha256", "0" * 64), ("packet_id", packet.pk)):
        refused(f"UPDATE annotator_submission SET {column} = %s WHERE id = %s", [value, s])
    refused("DELETE FROM annotator_submission WHERE id = %s", [s])
    for column, value in (("scorer_id", "x"), ("total", 9), ("finished_at", timezone.now()), ("params", "{}")):
        refused(f"UPDATE annotator_scoringrun SET {column} = %s WHERE id = %s", [value, r])
    refused("DELETE FROM annotator_scoringrun WHERE id = %s", [r])
    for column, value in (("reward", 0.5), ("status", "pending"), ("reward_json", b"{}"), ("reason", "x")):
        refused(f"UPDATE annotator_submissionscore SET {column} = %s WHERE id = %s", [value, x])
    refused("DELETE FROM annotator_submissionscore WHERE id = %s", [x])
    refused("DELETE FROM annotator_decision WHERE id = %s", [d.pk])
    if other_item is not None and not hasattr(other_item, "decision"):
        refused("UPDATE annotator_decision SET item_id = %s WHERE id = %s", [other_item.pk, d.pk])
    version = graded["adjudicated"].pk
    for column, value in (("tier", "provisional"), ("changelog", "{}"), ("source", "x"), ("number", 9)):
        refused(f"UPDATE annotator_groundtruthversion SET {column} = %s WHERE id = %s", [value, version])
    for column, value in (("attestation", "x"), ("frozen_at", None), ("version", 9)):
        refused(f"UPDATE annotator_ledger SET {column} = %s WHERE id = %s", [value, graded["ledger"].pk])
    # Nothing changed: the whole database still verifies.
    code, out = verify()
    assert code == 0, out


def test_tier_flipped_by_sql_never_releases_a_maintainers_blind_packet(maintainer, annotator_b, adjudicator):
    from annotator.actions.versions import do_import_provisional_version
    from tests.factories import make_user

    annotating_maintainer = make_user("maintainer_a", maintainer=True)
    packet = make_packet(maintainer, annotating_maintainer, annotator_b, adjudicator)
    version = do_import_provisional_version(packet, PROVISIONAL, actor=maintainer, source="t", source_sha256="0" * 64)
    client = client_for(annotating_maintainer)
    assert client.get(f"/api/packets/{packet.pk}/ledgers/B/").status_code == 404
    assert client.get(f"/api/packets/{packet.pk}/audit/").status_code == 404
    tamper(version, tier=GroundTruthVersion.Tier.ADJUDICATED)
    assert_integrity_error(client, f"/api/packets/{packet.pk}/ledgers/B/")
    assert_integrity_error(client, f"/api/packets/{packet.pk}/audit/")
    from annotator.reads.access import maintained_packets
    from annotator.reads.integrity import TamperedData

    with pytest.raises(TamperedData, match=f"version {version.pk}"):  # the audit view and dashboard
        maintained_packets(annotating_maintainer)
