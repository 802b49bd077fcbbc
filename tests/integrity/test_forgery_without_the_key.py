"""Forgeries made consistently with the database alone: a row changed with the triggers off,
its hashes and seal recomputed exactly as FrameLedger computes them, and a matching audit
entry appended at the chain head (linked and hashed as FrameLedger does). Without the signing
key the entry carries no valid signature, so every read refuses the row (``integrity_error``,
never the forgery, never a 500 of another kind) and ``verify_integrity`` names both the entry
and the row. Run on SQLite and on PostgreSQL (``DATABASE_URL``)."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from annotator.base import signing
from annotator.base.canonical import canonical_sha256
from annotator.base.seals import events_seal, row_seal
from annotator.models import Decision, GroundTruthVersion, Ledger, LedgerEvent, ScoringRun, SubmissionScore
from annotator.reads.integrity import describe
from tests.factories import client_for
from tests.grading.conftest import scored, upload
from tests.integrity.conftest import AGENT
from tests.integrity.tampering import edited_events, forge_entry, rehashed, tamper, verify

pytestmark = pytest.mark.django_db

# Who forges: no signature at all; their own key under FrameLedger's key id; their own key
# under its own id (an untrusted key).
FORGERS = ["unsigned", "own key, our key id", "own key, own id"]


def signer(forger: str) -> dict:
    if forger == "unsigned":
        return {}
    key = Ed25519PrivateKey.generate()
    kid = signing.current_key_id() if forger == "own key, our key id" else signing.key_id(key.public_key())
    return {"key": key, "kid": kid}


def assert_integrity_error(client, url: str, method: str = "get") -> None:
    response = getattr(client, method)(url)
    assert response.status_code == 500, (url, response.status_code, response.content[:300])
    assert response.json()["error"]["code"] == "integrity_error", url


def assert_named(*names: str) -> None:
    code, out = verify()
    assert code == 1, out
    for name in names:
        assert f"PROBLEM {name}" in out, (name, out)


def forged_entry_name(entry) -> str:
    return f"audit entry seq {entry.seq} (id {entry.pk}, {entry.operation} {entry.object_type}:{entry.object_id})"


@pytest.mark.parametrize("forger", FORGERS)
def test_a_frozen_ledger_rewritten_and_resealed_is_never_served(forger, packet, frozen, maintainer, adjudicator):
    ledger = frozen["A"]
    document = json.loads(ledger.canonical_json)
    first = document["events"][0]
    text = edited_events(ledger.canonical_json, verb="FORGED")
    event = next(e for e in LedgerEvent.objects.filter(ledger=ledger) if e.data == first)
    tamper(event, data={**first, "verb": "FORGED"})
    tamper(ledger, canonical_json=text, sha256=rehashed(text))
    ledger = Ledger.objects.get(pk=ledger.pk)
    hashes = {
        "ledger": ledger.sha256,
        "row": row_seal(ledger),
        "events": events_seal(ledger.events.order_by("created_at", "id")),
    }
    entry = forge_entry(
        "freeze_ledger", ledger, packet_id=packet.pk, hashes=hashes, details={"side": "A"}, **signer(forger)
    )
    assert_integrity_error(client_for(maintainer), f"/api/packets/{packet.pk}/ledgers/A/")
    assert_integrity_error(client_for(adjudicator), f"/api/packets/{packet.pk}/union/", "post")
    assert_named(describe(ledger), forged_entry_name(entry))


@pytest.mark.parametrize("forger", FORGERS)
def test_a_provisional_version_forged_as_adjudicated_never_releases_the_answer_key(
    forger, provisional, packet, annotator_a, maintainer
):
    url = f"/api/versions/{provisional.pk}/export/?file=gt.json"
    assert client_for(annotator_a).get(url).status_code == 404
    manifest = {**provisional.manifest, "tier": "adjudicated", "version": 1}
    _, manifest_sha = canonical_sha256(manifest)
    tamper(provisional, tier="adjudicated", manifest=manifest, manifest_sha256=manifest_sha)
    version = GroundTruthVersion.objects.get(pk=provisional.pk)
    hashes = {"version": version.sha256, "manifest": manifest_sha, "row": row_seal(version)}
    entry = forge_entry(
        "publish_adjudicated_version", version, packet_id=packet.pk, hashes=hashes, details={"number": 1},
        **signer(forger),
    )  # fmt: skip
    assert_integrity_error(client_for(annotator_a), url)
    assert_integrity_error(client_for(maintainer), f"/api/versions/{version.pk}/")
    assert_integrity_error(client_for(maintainer), f"/api/packets/{packet.pk}/versions/")
    assert_named(describe(version), forged_entry_name(entry))


@pytest.mark.parametrize("forger", FORGERS)
def test_a_reward_rewritten_and_resealed_never_reaches_the_leaderboard(forger, packet, provisional, maintainer):
    [submission] = upload(packet, maintainer, {"agent": AGENT})
    score = SubmissionScore.objects.get(pk=scored(provisional, [submission], maintainer)["agent"].pk)
    assert score.reward == 1.0
    tamper(score, reward=0.0123, reward_json=b'{"reward": 0.0123}', reward_txt=b"0.0123")
    score = SubmissionScore.objects.get(pk=score.pk)
    run = ScoringRun.objects.get(pk=score.run_id)
    entry = forge_entry(
        "score_results", run, packet_id=packet.pk, hashes={"scores": {str(score.pk): row_seal(score)}},
        **signer(forger),
    )  # fmt: skip
    client = client_for(maintainer)
    for url in (
        f"/api/versions/{provisional.pk}/leaderboard/",
        f"/api/versions/{provisional.pk}/leaderboard.csv",
        f"/api/scores/{score.pk}/",
        f"/api/scoring-runs/{run.pk}/scores/",
    ):
        assert_integrity_error(client, url)
    assert_named(describe(score), forged_entry_name(entry))


@pytest.mark.parametrize("forger", FORGERS)
def test_a_forged_decision_is_never_published(forger, packet, frozen, adjudicated, adjudicator):
    decision = Decision.objects.filter(item__union__packet=packet).order_by("pk").first()
    forged_value = {"verb": "cut", "nouns": ["bagel"], "start_frame": 1, "end_frame": 2}
    tamper(decision, action="edit", final_value=forged_value, rationale="forged")
    decision = Decision.objects.get(pk=decision.pk)
    hashes = {"row": row_seal(decision)}
    entry = forge_entry("decide_item", decision, packet_id=packet.pk, hashes=hashes, **signer(forger))
    client = client_for(adjudicator)
    assert_integrity_error(client, f"/api/packets/{packet.pk}/union/")
    assert_integrity_error(client, f"/api/packets/{packet.pk}/publish/", "post")
    assert GroundTruthVersion.objects.filter(packet=packet, tier="adjudicated").count() == 1
    assert_named(describe(decision), forged_entry_name(entry))


def test_an_entry_appended_without_the_key_is_named_even_when_it_changes_nothing(packet, frozen):
    entry = forge_entry("freeze_ledger", frozen["A"], packet_id=packet.pk, hashes={"note": "appended"})
    assert_named(forged_entry_name(entry))
    assert "not signed" in verify()[1]


def test_every_entry_frozen_work_appends_is_signed_by_the_configured_key(packet, frozen, adjudicated):
    from annotator.models import AuditEntry

    entries = list(AuditEntry.objects.all())
    assert entries and {entry.key_id for entry in entries} == {signing.current_key_id()}
    assert all(entry.signature_problem() is None for entry in entries)
    assert verify()[0] == 0
