"""``manage.py verify_integrity``, system checks E010/E011 and the version page's badge:
a clean database verifies; each kind of tampering is reported, naming the object."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection

from annotator.entry.system_checks import check_integrity
from annotator.models import AuditEntry
from tests.factories import client_for
from tests.integrity.tampering import edited_events, rehashed, remove, tamper, triggers_off

pytestmark = pytest.mark.django_db


def verify(*args) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_integrity", *args, stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def everything(frozen, adjudicated, provisional):
    return {"A": frozen["A"], "B": frozen["B"], "adjudicated": adjudicated, "provisional": provisional}


def test_verify_integrity_passes_a_clean_database(everything):
    code, out = verify()
    assert code == 0, out
    assert "checked 2 frozen ledger(s), 2 version(s) with their manifests" in out
    assert out.splitlines()[-2].endswith("all verified")
    head = AuditEntry.objects.order_by("-seq").first()
    assert out.splitlines()[-1] == f"audit chain head: {head.seq}:{head.sha256}"
    assert not AuditEntry.objects.filter(operation="integrity_check_failed").exists()


def test_verify_integrity_reports_a_tampered_ledger(everything, packet):
    ledger = everything["A"]
    tamper(ledger, canonical_json=edited_events(ledger.canonical_json, verb="TAMPERED"))
    code, out = verify()
    assert code == 1
    assert f"PROBLEM frozen ledger {ledger.pk} (packet {packet.pk}, side A): canonical JSON does not match" in out
    assert AuditEntry.objects.filter(operation="integrity_check_failed").count() == 1


def test_verify_integrity_reports_a_ledger_rewritten_with_its_hash(everything):
    ledger = everything["B"]
    text = edited_events(ledger.canonical_json, verb="TAMPERED")
    tamper(ledger, canonical_json=text, sha256=rehashed(text))
    code, out = verify()
    assert code == 1
    assert f"PROBLEM frozen ledger {ledger.pk}" in out and "differs from the one the audit log recorded" in out


def test_verify_integrity_reports_an_unfrozen_ledger(everything):
    tamper(everything["A"], frozen_at=None)
    code, out = verify()
    assert code == 1
    assert f"PROBLEM ledger {everything['A'].pk}: frozen in the audit log, now missing or unfrozen" in out


def test_verify_integrity_reports_a_tampered_version(everything, packet):
    version = everything["provisional"]
    tamper(version, canonical_json=edited_events(version.canonical_json, end_frame=300))
    code, out = verify()
    assert code == 1
    assert f"PROBLEM version {version.pk} (packet {packet.pk}, provisional v1): canonical JSON does not match" in out


def test_verify_integrity_reports_a_tampered_export_manifest(everything):
    version = everything["adjudicated"]
    tamper(version, manifest={**version.manifest, "ledger_a_sha256": "0" * 64})
    code, out = verify()
    assert code == 1
    assert f"PROBLEM version {version.pk}" in out and "manifest does not match its SHA-256" in out


def test_verify_integrity_reports_a_deleted_version(everything):
    version = everything["provisional"]
    with triggers_off("annotator_versioncalibration") as cursor:
        cursor.execute("DELETE FROM annotator_versioncalibration WHERE version_id = %s", [version.pk])
        cursor.execute("DELETE FROM annotator_job WHERE version_id = %s", [version.pk])  # its anchors' job
    remove(version)
    code, out = verify()
    assert code == 1
    assert f"PROBLEM version {version.pk}: published according to the audit log, now missing" in out


def test_verify_integrity_reports_an_edited_audit_entry(everything):
    entry = AuditEntry.objects.get(operation="freeze_ledger", object_id=str(everything["A"].pk))
    tamper(entry, details={"side": "B"})
    code, out = verify()
    assert code == 1
    assert f"PROBLEM audit entry seq {entry.seq} (id {entry.pk}, freeze_ledger annotator.Ledger:" in out
    assert "its fields do not match its SHA-256 (edited)" in out


def test_verify_integrity_reports_a_deleted_audit_entry(everything):
    entry = AuditEntry.objects.filter(operation="add_event").order_by("seq")[1]
    remove(entry)
    code, out = verify()
    assert code == 1
    assert f"PROBLEM audit entry seq {entry.seq}: missing from the chain (deleted)" in out
    assert f"PROBLEM audit entry seq {entry.seq + 1} " in out and "does not link to the previous entry" in out


def test_verify_integrity_reports_a_rewritten_chain_against_the_kept_head(everything):
    head = AuditEntry.objects.order_by("-seq").first()
    code, out = verify("--expect-head", f"{head.seq}:{head.sha256}")
    assert code == 0, out
    code, out = verify("--expect-head", f"{head.seq}:{'0' * 64}")
    assert code == 1 and f"PROBLEM audit entry seq {head.seq}: SHA-256 {head.sha256} is not the recorded head" in out


def test_integrity_check_e011_reports_tampering_only_when_asked_for_the_database(everything):
    assert check_integrity(None, databases=["default"]) == []
    tamper(everything["B"], canonical_json=edited_events(everything["B"].canonical_json, verb="TAMPERED"))
    assert check_integrity(None) == []  # plain `manage.py check` does not read the data
    [error] = check_integrity(None, databases=["default"])
    assert error.id == "annotator.E011" and f"frozen ledger {everything['B'].pk}" in error.msg
    with pytest.raises(SystemCheckError, match="annotator.E011"):
        call_command("check", databases=["default"], stdout=io.StringIO())


def test_integrity_check_e010_reports_a_missing_trigger(everything):
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending FK checks before ALTER TABLE
            cursor.execute("ALTER TABLE annotator_auditentry DISABLE TRIGGER frameledger_immutable")
        else:
            cursor.execute("DROP TRIGGER frameledger_annotator_auditentry_delete")
    errors = check_integrity(None, databases=["default"])
    assert [e.id for e in errors] == ["annotator.E010"]
    assert "annotator_auditentry" in errors[0].msg


def test_version_page_badge_says_verified_or_failed(everything):
    version = everything["adjudicated"]
    client = client_for(everything["adjudicated"].created_by)
    page = client.get(f"/versions/{version.pk}/").content.decode()
    assert 'data-integrity="verified"' in page and "integrity verified" in page
    tamper(version, canonical_json=edited_events(version.canonical_json, verb="TAMPERED"))
    page = client.get(f"/versions/{version.pk}/").content.decode()
    assert 'data-integrity="failed"' in page and "canonical JSON does not match its SHA-256" in page
    assert "TAMPERED" not in page


def test_cutting_the_newest_entries_is_reported_by_default_through_the_anchored_head(everything, settings):
    from annotator.reads.anchors import anchor_path, anchors

    code, out = verify()  # a clean check anchors the head it saw, outside the database
    assert code == 0, out
    head = AuditEntry.objects.order_by("-seq").first()
    [anchor] = anchors()
    assert (anchor.seq, anchor.sha256) == (head.seq, head.sha256)
    assert not anchor_path().is_relative_to(settings.MEDIA_ROOT)  # outside the media
    # Cut the chain's newest two entries: what is left is a consistent, shorter chain.
    for entry in AuditEntry.objects.order_by("-seq")[:2]:
        remove(entry)
    code, out = verify("--no-record")
    assert code == 1
    assert f"PROBLEM audit entry seq {head.seq}: anchored as a chain head ({anchor_path()} line 1)" in out
    assert "the chain was cut" in out


def test_freezing_anchors_the_head_once_committed(packet, annotator_a, django_capture_on_commit_callbacks):
    from annotator.reads.anchors import anchors
    from tests.integrity.conftest import A_EVENTS, fill_and_freeze

    with django_capture_on_commit_callbacks(execute=True):
        fill_and_freeze(packet, "A", annotator_a, A_EVENTS)
    anchor = anchors()[-1]
    assert f" freeze ledger {packet.ledgers.get(side='A').pk} key=" in anchor.text  # a signed head
    assert anchor.seq == AuditEntry.objects.order_by("-seq").first().seq
