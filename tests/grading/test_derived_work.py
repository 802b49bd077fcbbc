"""A freeze and a publication do only their own writes; the agreement report and the
calibration anchors are derived work, computed by Celery tasks once they have committed
(``annotator.actions.derived``). Their jobs say queued, running, done or failed (with the
reason) where the results are read; a failure never undoes the freeze or the publication;
running a task twice stores its result once."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.versions import do_import_provisional_version
from annotator.entry import tasks
from annotator.models import AgreementReport, AuditEntry, Job, Ledger, VersionCalibration
from tests.factories import after_commit, client_for
from tests.grading.conftest import A_EVENTS, ATTESTATION, B_EVENTS, fill_and_freeze
from tests.integrity.tampering import edited_events, tamper
from tests.media.conftest import eager_celery  # noqa: F401 (a fixture)

PROVISIONAL = [{"verb": "take", "nouns": ["cup"], "start_frame": 90, "end_frame": 210}]
DERIVED_JOB_JS = Path("frontend/static/frontend/js/grading/derived_job.js").resolve()
NODE = shutil.which("node")


def fill(packet, side, user, events) -> Ledger:
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, (verb, nouns, start, end) in enumerate(events):
        data = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
        do_add_event(ledger, data, actor=user, expected_version=version)
    return ledger


def freeze(ledger, user, events) -> Ledger:
    return do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(events))


def run_callbacks(callbacks) -> None:
    """What the commit would have run, with the tasks inline."""
    from deploy.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        for callback in callbacks:
            callback()
    finally:
        app.conf.task_always_eager = before


def job_text(job: dict, what: str) -> str:
    """``derivedJobText`` of the page scripts, run by Node on a job as the API shows it."""
    script = f"import {{ derivedJobText }} from {json.dumps(str(DERIVED_JOB_JS))};\n"
    script += f"console.log(derivedJobText({json.dumps(job)}, {json.dumps(what)}));\n"
    out = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.django_db
def test_the_second_freeze_writes_only_the_freeze_and_the_report_follows_its_commit(
    packet, annotator_a, annotator_b, maintainer, django_capture_on_commit_callbacks
):
    fill_and_freeze(packet, "A", annotator_a, A_EVENTS)
    ledger = fill(packet, "B", annotator_b, B_EVENTS)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        with CaptureQueriesContext(connection) as queries:
            freeze(ledger, annotator_b, B_EVENTS)
    # The freeze's transaction stored no report and never scored: only the job row waits.
    assert not any("INSERT" in q["sql"] and "annotator_agreementreport" in q["sql"] for q in queries.captured_queries)
    assert not AgreementReport.objects.exists()
    ledger.refresh_from_db()
    assert ledger.is_frozen and AuditEntry.objects.filter(operation="freeze_ledger", object_id=str(ledger.pk)).exists()
    [job] = Job.objects.filter(kind="agreement", packet=packet)
    assert (job.status, job.message) == ("queued", "queued: computed once the freeze has committed")
    assert job.result == {"ledger_a_sha256": Ledger.objects.get(packet=packet, side="A").sha256,
                          "ledger_b_sha256": ledger.sha256}  # fmt: skip

    # Read while queued: the state, honestly, not a report computed on the way.
    client = client_for(maintainer)
    pending = client.get(f"/api/packets/{packet.pk}/agreement/")
    assert pending.status_code == 202
    body = pending.json()
    assert {k: body[k] for k in ("id", "packet", "created_at", "status")} == {
        "id": None, "packet": packet.pk, "created_at": None, "status": "queued"
    }  # fmt: skip
    assert (body["job"]["id"], body["job"]["kind"], body["job"]["status"]) == (job.pk, "agreement", "queued")
    assert client.get(f"/api/jobs/{job.pk}/").json()["status"] == "queued"
    assert client_for(annotator_a).get(f"/api/jobs/{job.pk}/").status_code == 404

    run_callbacks(callbacks)  # the commit's hooks: the task runs, here inline
    job.refresh_from_db()
    report = AgreementReport.objects.get(packet=packet)
    assert (job.status, job.progress, job.result["report"]) == ("done", 1.0, report.pk)
    done = client.get(f"/api/packets/{packet.pk}/agreement/")
    assert done.status_code == 200
    assert done.json()["id"] == report.pk and "job" not in done.json() and "status" not in done.json()
    assert done.json()["a_vs_b"]["union"] == {"agreed": 1, "conflicting": 1, "a_only": 1, "b_only": 1}
    if NODE:
        assert job_text(body["job"], "The agreement report") == (
            f"The agreement report: queued, computed after the commit (job {job.pk})."
        )


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_celery")
def test_a_failing_agreement_task_never_undoes_the_freeze_and_ends_failed_with_its_reason(
    packet, annotator_a, annotator_b, maintainer, caplog
):
    # Real commits: the freeze's transaction commits, then its task runs (inline) and meets
    # ledger A changed in the database since it froze, which the report must never use.
    ledger_a = freeze(fill(packet, "A", annotator_a, A_EVENTS), annotator_a, A_EVENTS)
    with transaction.atomic():
        tamper(ledger_a, canonical_json=edited_events(ledger_a.canonical_json, verb="TAMPERED"))
    ledger_b = fill(packet, "B", annotator_b, B_EVENTS)
    with caplog.at_level(logging.ERROR, logger="annotator.actions.derived"):
        response = client_for(annotator_b).post(
            f"/api/packets/{packet.pk}/ledger/freeze/",
            {"attestation": ATTESTATION, "version": ledger_b.version},
            format="json",
        )
    assert response.status_code == 200, response.content
    ledger_b.refresh_from_db()
    assert ledger_b.is_frozen and ledger_b.sha256 == response.json()["sha256"]
    [job] = Job.objects.filter(kind="agreement", packet=packet)
    assert job.status == "failed"
    assert job.message.startswith(f"agreement report of packet {packet.pk} could not be computed: TamperedData: ")
    assert f"frozen ledger {ledger_a.pk}" in job.message
    assert not AgreementReport.objects.exists()
    assert f"agreement report of packet {packet.pk} failed (job {job.pk})" in caplog.text
    # The integrity failure is in the audit log, though the task's transaction rolled back.
    assert AuditEntry.objects.filter(operation="integrity_error", object_id=str(ledger_a.pk)).exists()
    assert client_for(maintainer).get(f"/api/jobs/{job.pk}/").json()["status"] == "failed"


@pytest.mark.django_db
def test_the_agreement_task_run_twice_stores_one_report(
    packet, annotator_a, annotator_b, django_capture_on_commit_callbacks
):
    fill_and_freeze(packet, "A", annotator_a, A_EVENTS)
    with django_capture_on_commit_callbacks(execute=False):
        freeze(fill(packet, "B", annotator_b, B_EVENTS), annotator_b, B_EVENTS)
    job = Job.objects.get(kind="agreement", packet=packet)
    assert tasks.agreement_report(job.pk) == "done"
    first = AgreementReport.objects.get(packet=packet)
    assert tasks.agreement_report(job.pk) == "done"  # a redelivered message
    again = AgreementReport.objects.get(packet=packet)
    assert (again.pk, again.report, again.ledger_a_sha256, again.ledger_b_sha256) == (
        first.pk, first.report, first.ledger_a_sha256, first.ledger_b_sha256
    )  # fmt: skip
    assert AuditEntry.objects.filter(operation="agreement_report").count() == 1


@pytest.mark.django_db
def test_a_publication_writes_only_the_version_and_its_anchors_follow_idempotently(
    packet, maintainer, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        version = do_import_provisional_version(
            packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="0" * 64
        )
    assert not VersionCalibration.objects.exists()
    [job] = Job.objects.filter(kind="calibration", version=version)
    assert (job.status, job.packet_id) == ("queued", packet.pk)
    client = client_for(maintainer)
    pending = client.get(f"/api/versions/{version.pk}/calibration/").json()
    assert pending["calibrations"] == [] and pending["job"]["status"] == "queued"
    board = client.get(f"/api/versions/{version.pk}/leaderboard/").json()
    assert board["references"] == [] and board["calibration_job"]["id"] == job.pk

    run_callbacks(callbacks)
    job.refresh_from_db()
    calibration = VersionCalibration.objects.get(version=version)
    assert (job.status, job.result["calibration"], job.result["status"]) == ("done", calibration.pk, "ok")
    body = client.get(f"/api/versions/{version.pk}/calibration/").json()
    assert set(body) == {"version", "task_scorer_id", "calibrations", "ready"}  # as before: no job once done
    assert [c["status"] for c in body["calibrations"]] == ["ok"]
    board = client.get(f"/api/versions/{version.pk}/leaderboard/").json()
    assert "calibration_job" not in board
    assert {r["label"] for r in board["references"]} >= {"anchor/oracle", "anchor/empty"}

    anchors = calibration.anchors
    assert tasks.version_calibration(job.pk) == "done"  # run again: the same row, the same anchors
    [again] = VersionCalibration.objects.filter(version=version)
    assert (again.pk, again.anchors, again.status) == (calibration.pk, anchors, "ok")


@pytest.mark.django_db
def test_a_failing_calibration_task_leaves_the_publication_and_says_why(
    packet, maintainer, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        version = do_import_provisional_version(
            packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="0" * 64
        )
    # Changed in the database between the commit and the task: the anchors must not use it.
    tamper(version, canonical_json=edited_events(version.canonical_json, end_frame=25000))
    run_callbacks(callbacks)
    job = Job.objects.get(kind="calibration", version=version)
    assert job.status == "failed"
    assert job.message.startswith(f"calibration anchors of version {version.pk} could not be computed: TamperedData")
    assert not VersionCalibration.objects.exists()
    version.refresh_from_db()
    assert version.pk and AuditEntry.objects.filter(operation="publish_provisional_version").exists()
    if NODE:
        shown = client_for(maintainer).get(f"/api/jobs/{job.pk}/").json()
        assert job_text(shown, "The calibration anchors") == (
            f"The calibration anchors: failed (job {job.pk}): {job.message}"
        )


@pytest.mark.django_db
def test_publishing_in_after_commit_leaves_the_same_end_state(packet, maintainer):
    with after_commit():
        version = do_import_provisional_version(
            packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="0" * 64
        )
    assert VersionCalibration.objects.get(version=version).status == "ok"
    assert Job.objects.get(kind="calibration", version=version).status == "done"
