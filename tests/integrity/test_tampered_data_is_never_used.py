"""Item 2 of issue 10: frozen data changed in the database is detected wherever it is
read (serving, union, agreement, export, scoring), answered with a loud, audited
integrity error, and never handed out."""

from __future__ import annotations

import json

import pytest

from annotator.actions.grading import do_start_scoring_run
from annotator.models import AuditEntry, Ledger, SubmissionScore, Union
from annotator.reads.grading_inputs import scoring_inputs
from annotator.reads.integrity import TamperedData
from tests.factories import client_for
from tests.grading.conftest import score_in_process, upload
from tests.integrity.conftest import PROVISIONAL
from tests.integrity.tampering import edited_events, rehashed, tamper

pytestmark = pytest.mark.django_db


def assert_integrity_error(response, names: str) -> None:
    assert response.status_code == 500, response.content
    error = response.json()["error"]
    assert error["code"] == "integrity_error"
    assert names in error["message"]
    assert b"TAMPERED" not in response.content


def integrity_entries(obj) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(operation="integrity_error", object_id=str(obj.pk)))


def test_tampered_frozen_ledger_is_never_served(packet, frozen, maintainer):
    ledger = frozen["A"]
    tamper(ledger, canonical_json=edited_events(ledger.canonical_json, verb="TAMPERED"))
    response = client_for(maintainer).get(f"/api/packets/{packet.pk}/ledgers/A/")
    assert_integrity_error(response, f"frozen ledger {ledger.pk} (packet {packet.pk}, side A)")
    [entry] = integrity_entries(ledger)
    assert entry.hashes["expected"] == ledger.sha256 and entry.hashes["found"] != ledger.sha256


def test_frozen_ledger_rewritten_with_a_fresh_hash_is_never_served(packet, frozen, maintainer):
    # Content and hash changed together: the audit log still holds the hash frozen.
    ledger = frozen["B"]
    text = edited_events(ledger.canonical_json, verb="TAMPERED")
    tamper(ledger, canonical_json=text, sha256=rehashed(text))
    response = client_for(maintainer).get(f"/api/packets/{packet.pk}/ledgers/B/")
    assert_integrity_error(response, "differs from the one the audit log recorded")
    assert len(integrity_entries(ledger)) == 1


def test_tampered_frozen_ledger_never_reaches_the_union(packet, frozen, adjudicator):
    tamper(frozen["A"], canonical_json=edited_events(frozen["A"].canonical_json, verb="TAMPERED"))
    response = client_for(adjudicator).post(f"/api/packets/{packet.pk}/union/")
    assert_integrity_error(response, f"frozen ledger {frozen['A'].pk}")
    assert not Union.objects.filter(packet=packet).exists()
    # The union's transaction was rolled back; the failure is still in the audit log.
    assert len(integrity_entries(frozen["A"])) == 1


def test_tampered_frozen_ledger_never_reaches_the_agreement_report(packet, frozen, maintainer):
    tamper(frozen["B"], canonical_json=edited_events(frozen["B"].canonical_json, end_frame=999))
    response = client_for(maintainer).get(f"/api/packets/{packet.pk}/agreement/")
    assert_integrity_error(response, f"frozen ledger {frozen['B'].pk}")


def test_tampered_version_is_never_served_or_exported(packet, adjudicated, adjudicator, maintainer):
    version = adjudicated
    tamper(version, canonical_json=edited_events(version.canonical_json, verb="TAMPERED"))
    name = f"version {version.pk} (packet {packet.pk}, adjudicated v1)"
    for client in (client_for(adjudicator), client_for(maintainer)):
        assert_integrity_error(client.get(f"/api/versions/{version.pk}/"), name)
        assert_integrity_error(client.get(f"/api/packets/{packet.pk}/versions/"), name)
        assert_integrity_error(client.get(f"/api/versions/{version.pk}/export/"), name)
        assert_integrity_error(client.get(f"/api/versions/{version.pk}/export/?file=gt.json"), name)
    assert len(integrity_entries(version)) == 8


def test_tampered_export_manifest_is_never_exported(packet, provisional, maintainer):
    manifest = {**provisional.manifest, "source": "someone else's labels"}
    tamper(provisional, manifest=manifest)
    response = client_for(maintainer).get(f"/api/versions/{provisional.pk}/export/?file=manifest.json")
    assert_integrity_error(response, "manifest does not match its SHA-256")


def test_tampered_version_is_never_scored(packet, provisional, maintainer):
    submissions = upload(packet, maintainer, {"agent": json.dumps({"actions": PROVISIONAL}).encode()})
    run = do_start_scoring_run(provisional, submissions, actor=maintainer, dispatch=False)
    tamper(provisional, canonical_json=edited_events(provisional.canonical_json, end_frame=25000))
    provisional.refresh_from_db()
    with pytest.raises(TamperedData, match=f"version {provisional.pk}"):
        scoring_inputs(provisional, "egocentric-f1-v2")
    with pytest.raises(TamperedData):
        do_start_scoring_run(provisional, submissions, actor=maintainer, dispatch=False)
    # A run pinned before the change: its scores fail with the integrity error, unscored.
    score_in_process(run)
    [result] = run.results.all()
    assert result.status == SubmissionScore.Status.ERROR and result.reward is None
    assert result.error.startswith(f"integrity error: version {provisional.pk}")


def test_republishing_over_a_tampered_version_is_refused(packet, adjudicated, adjudicator):
    tamper(adjudicated, canonical_json=edited_events(adjudicated.canonical_json, verb="TAMPERED"))
    response = client_for(adjudicator).post(f"/api/packets/{packet.pk}/publish/")
    assert_integrity_error(response, f"version {adjudicated.pk}")


def test_untouched_frozen_rows_are_served(packet, frozen, adjudicated, maintainer):
    client = client_for(maintainer)
    assert client.get(f"/api/packets/{packet.pk}/ledgers/A/").status_code == 200
    assert client.get(f"/api/versions/{adjudicated.pk}/export/").status_code == 200
    assert not AuditEntry.objects.filter(operation="integrity_error").exists()
    assert Ledger.objects.get(pk=frozen["A"].pk).sha256 == frozen["A"].sha256
