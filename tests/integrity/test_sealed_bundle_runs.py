"""The executable bundle's run a leaderboard row rests on (issue 23, after the union): its
kind, reference flag, outcome and stages are shown beside the agent's reward. A run that has
ended (``done``, ``error``, ended by the sweep) is sealed by its ``finish_bundle_run`` entry and
refused below the ORM (SQLite here, PostgreSQL on the suite's PostgreSQL pass); a running run
stays writable by its worker. With the triggers dropped, a change to any sealed column is an
``integrity_error`` on the leaderboard and the run's API, and ``verify_integrity`` names the run.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotator.actions import bundles
from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions, run_chunks
from annotator.actions.versions import do_import_provisional_version
from annotator.base.canonical import sha256_hex
from annotator.base.grading import sandbox
from annotator.base.grading.uploads import SubmissionFile
from annotator.models import AuditEntry, BundleRun
from annotator.reads.integrity import describe
from tests.factories import client_for
from tests.grading.sandbox_helpers import bundle
from tests.grading.test_bundles import synthetic_version
from tests.integrity.tampering import refused, remove, tamper, triggers_off, verify

pytestmark = pytest.mark.django_db


def assert_integrity_error(response) -> None:
    assert response.status_code == 500, (response.status_code, response.content[:300])
    assert response.json()["error"]["code"] == "integrity_error"


def stage(name: str, **fields) -> sandbox.StageResult:
    return sandbox.StageResult(name=name, argv=[name], seconds=1.5, exit_code=0, outcome="ok", **fields)


@pytest.fixture
def moments(maintainer, annotator_a, annotator_b, adjudicator, tmp_path):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(tmp_path))
    return version


def rows_for(version) -> bytes:
    queries = json.loads(version.canonical_json)["events"]
    return b"".join(json.dumps({"query_id": q["query_id"], "start": 0.0, "end": 2.0}).encode() + b"\n" for q in queries)


def submitted(version, maintainer, label="search") -> BundleRun:
    return bundles.do_submit_bundle(version, bundle(), actor=maintainer, label=label, dispatch=False)


def finished(version, maintainer, label="search") -> BundleRun:
    """A run ended the way the worker ends one: claimed, run (stages faked), scored."""
    run = submitted(version, maintainer, label)
    assert bundles._claim(run.pk)
    run = BundleRun.objects.select_related("version__packet").get(pk=run.pk)
    stages = [stage("build"), stage("call-1", requests=3, rows=3)]
    return bundles._score(run, stages, rows_for(version), {"sandbox": "bubblewrap (test)"})


@pytest.fixture
def agent(moments, maintainer):
    content = rows_for(moments)
    file = SubmissionFile(
        label="agent", name="agent.jsonl", content=content, sha256=sha256_hex(content), size=len(content)
    )
    [submission] = do_upload_submissions(moments.packet, [file], actor=maintainer)
    scoring_run = do_start_scoring_run(moments, [submission], actor=maintainer, dispatch=False)
    for chunk in run_chunks(scoring_run):
        do_score_batch(scoring_run.pk, chunk)
    return submission  # scored: a row of the leaderboard


def reads(run: BundleRun, version) -> list[str]:
    """Where the run is shown: the leaderboard of the version its rows were scored against,
    the run list of the version it names, the run itself."""
    return [
        f"/api/versions/{version.pk}/leaderboard/",
        f"/api/versions/{run.version_id}/bundles/",
        f"/api/bundle-runs/{run.pk}/",
    ]


def test_a_finished_run_reads_and_verifies(moments, maintainer):
    run = finished(moments, maintainer)
    assert run.status == "done" and run.submission_id and run.score_id
    client = client_for(maintainer)
    board = client.get(f"/api/versions/{moments.pk}/leaderboard/").json()
    [row] = [r for r in board["rows"] if r.get("bundle_run") == run.pk]
    assert row["kind"] == "bundle" and row["reference"] is False and row["outcome"] == "ok"
    for url in reads(run, moments):
        assert client.get(url).status_code == 200, url
    entry = AuditEntry.objects.filter(operation="finish_bundle_run", object_id=str(run.pk)).get()
    assert entry.hashes["row"] and entry.details["status"] == "done"
    code, out = verify()
    assert code == 0, out


def other_version(version, maintainer):
    queries = json.loads(version.canonical_json)["events"][:2]
    events = [{"query_id": q["query_id"], "query": q["query"], "intervals": q["intervals"]} for q in queries]
    return do_import_provisional_version(
        version.packet, events, actor=maintainer, source="other", source_sha256="7" * 64
    )


# (column, new value): every sealed column of a finished run. Callables get (run, agent, version).
COLUMNS = [
    ("submission_id", lambda run, agent, version: agent.pk),
    ("reference", True),
    ("status", "error"),
    ("outcome", "changed by hand"),
    ("stages", [{"name": "build", "seconds": 0.1}]),
    ("enforcement", {"sandbox": "none"}),
    ("score_id", None),
    ("version_id", lambda run, agent, version: other_version(version, run.created_by).pk),
    ("label", "reference"),
    ("bundle_sha256", "0" * 64),
    ("device", "cuda"),
    ("queue", "elsewhere"),
    ("limits", {"build_seconds": 1e9}),
    ("created_by_id", None),
    ("created_at", timezone.now() - timedelta(days=3)),
    ("finished_at", timezone.now() - timedelta(days=3)),
    ("worker", "somewhere:1"),
    ("heartbeat_at", timezone.now() - timedelta(days=3)),
]


@pytest.mark.parametrize(("column", "value"), COLUMNS, ids=[c for c, _ in COLUMNS])
def test_each_column_of_a_finished_run_is_an_integrity_error_and_named(moments, maintainer, agent, column, value):
    run = finished(moments, maintainer)
    value = value(run, agent, moments) if callable(value) else value
    before = AuditEntry.objects.filter(operation="integrity_error").count()
    if column == "submission_id":  # the agent's row shown as the run's (kind, reference, outcome)
        tamper(run, submission_id=None)
        tamper(run, submission_id=value, reference=False)
    else:
        tamper(run, **{column: value})
    run = BundleRun.objects.get(pk=run.pk)
    client = client_for(maintainer)
    for url in reads(run, moments):
        assert_integrity_error(client.get(url))
    assert AuditEntry.objects.filter(operation="integrity_error").count() > before
    code, out = verify()
    assert code == 1, out
    assert f"PROBLEM {describe(run)}: its columns differ from the seal the audit log recorded" in out, out


def test_the_insider_change_of_the_issue_is_refused_and_named(moments, maintainer, agent):
    """UPDATE ... SET submission_id, reference, outcome on a finished run: refused with the
    triggers; with them dropped, the leaderboard answers integrity_error instead of showing
    the agent's row as a reference bundle row."""
    run = finished(moments, maintainer)
    statement = "UPDATE annotator_bundlerun SET submission_id = %s, reference = %s, outcome = %s WHERE id = %s"
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, [agent.pk, True, "changed by hand", run.pk])
    with triggers_off(BundleRun._meta.db_table) as cursor:
        cursor.execute("UPDATE annotator_bundlerun SET submission_id = NULL WHERE id = %s", [run.pk])
        cursor.execute(statement, [agent.pk, True, "changed by hand", run.pk])
    assert_integrity_error(client_for(maintainer).get(f"/api/versions/{moments.pk}/leaderboard/"))
    code, out = verify()
    assert code == 1 and f"PROBLEM bundle run {run.pk} (version {moments.pk})" in out, out


def test_error_and_swept_runs_are_sealed_too(moments, maintainer):
    failed = submitted(moments, maintainer, "failed")
    assert bundles._claim(failed.pk)
    failed = bundles._error(failed, "bubblewrap is missing", [stage("build")], {"sandbox": "none"})
    swept = submitted(moments, maintainer, "swept")
    old = timezone.now() - timedelta(seconds=django_settings.FRAMELEDGER_BUNDLE_LEASE_SECONDS + 5)
    BundleRun.objects.filter(pk=swept.pk).update(status="running", worker="host:1", heartbeat_at=old)
    assert bundles.do_sweep_bundle_runs() == [swept.pk]
    client = client_for(maintainer)
    for run in (failed, swept):
        run = BundleRun.objects.get(pk=run.pk)
        assert run.status == "error"
        entry = AuditEntry.objects.get(operation="finish_bundle_run", object_id=str(run.pk))
        assert entry.hashes["row"] and entry.details["status"] == "error"
        assert client.get(f"/api/bundle-runs/{run.pk}/").status_code == 200
    assert verify()[0] == 0
    for run in (failed, swept):
        tamper(run, outcome="ok")
        assert_integrity_error(client.get(f"/api/bundle-runs/{run.pk}/"))
    code, out = verify()
    assert code == 1, out
    for run in (failed, swept):
        assert f"PROBLEM {describe(run)}: its columns differ from the seal" in out, out


def test_a_run_ended_by_sql_without_a_seal_is_an_integrity_error(moments, maintainer, agent):
    """A queued run is writable by the worker's columns; one made done by SQL (no finish
    seal) pointing at an agent's submission is never shown as that agent's bundle row."""
    run = submitted(moments, maintainer)
    BundleRun.objects.filter(pk=run.pk).update(status="done", submission=agent, outcome="changed by hand")
    assert_integrity_error(client_for(maintainer).get(f"/api/versions/{moments.pk}/leaderboard/"))
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(run)}: no seal for it in the audit log" in out, out


def test_the_columns_fixed_at_submission_are_sealed_while_the_run_is_queued(moments, maintainer):
    run = submitted(moments, maintainer)
    assert client_for(maintainer).get(f"/api/bundle-runs/{run.pk}/").status_code == 200
    tamper(run, reference=True)
    assert_integrity_error(client_for(maintainer).get(f"/api/bundle-runs/{run.pk}/"))
    code, out = verify()
    assert code == 1 and f"PROBLEM {describe(run)}: its columns differ from the seal" in out, out


def test_a_deleted_finished_run_is_named(moments, maintainer):
    run = finished(moments, maintainer)
    remove(run)
    code, out = verify()
    assert code == 1 and f"PROBLEM bundle run {run.pk}: recorded in the audit log, now missing (deleted)" in out, out


def test_triggers_refuse_every_update_and_delete_of_a_finished_run(moments, maintainer):
    run = finished(moments, maintainer)
    changes = (
        ("reference", True), ("outcome", "changed by hand"), ("status", "running"), ("stages", "[]"),
        ("enforcement", "{}"), ("score_id", None), ("submission_id", None), ("heartbeat_at", timezone.now()),
    )  # fmt: skip
    for column, value in changes:
        refused(f"UPDATE annotator_bundlerun SET {column} = %s WHERE id = %s", [value, run.pk])
    refused("DELETE FROM annotator_bundlerun WHERE id = %s", [run.pk])
    with pytest.raises(IntegrityError), transaction.atomic():
        BundleRun.objects.filter(pk=run.pk).update(reference=True)
    assert verify()[0] == 0


def test_a_running_run_stays_writable_by_its_worker_but_not_its_submission(moments, maintainer):
    run = submitted(moments, maintainer)
    assert bundles._claim(run.pk)
    bundles._heartbeat(run.pk)()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotator_bundlerun SET stages = %s, outcome = %s, heartbeat_at = %s WHERE id = %s",
            ["[]", "", timezone.now(), run.pk],
        )
    for column, value in (("reference", True), ("version_id", 0), ("bundle_sha256", "0" * 64), ("label", "x")):
        refused(f"UPDATE annotator_bundlerun SET {column} = %s WHERE id = %s", [value, run.pk])
    refused("DELETE FROM annotator_bundlerun WHERE id = %s", [run.pk])
    run = BundleRun.objects.select_related("version__packet").get(pk=run.pk)
    done = bundles._score(run, [stage("build"), stage("call-1", rows=3)], rows_for(moments), {})
    assert done.status == "done"
    assert verify()[0] == 0


def test_a_queued_run_whose_bytes_were_swapped_is_not_run(moments, maintainer):
    # The trigger refuses the swap; with it dropped, the worker checks the bytes itself
    # before anything of them runs.
    run = submitted(moments, maintainer)
    swapped = bundle(run="echo swapped > /job/out/marker\n")
    tamper(run, bundle=swapped)
    ended = bundles.do_run_bundle(run.pk)
    assert ended.status == BundleRun.Status.ERROR and ended.stages == [], ended.outcome
    assert "bundle's bytes" in ended.outcome and "not those submitted" in ended.outcome, ended.outcome


def test_a_queued_run_whose_submitted_columns_changed_is_not_run(moments, maintainer):
    run = submitted(moments, maintainer)
    tamper(run, reference=True)
    ended = bundles.do_run_bundle(run.pk)
    assert ended.status == BundleRun.Status.ERROR and ended.stages == [], ended.outcome
    assert ended.outcome.startswith("integrity: ") and "differ from the seal" in ended.outcome, ended.outcome


def test_a_finished_runs_bundle_bytes_replaced_are_named(moments, maintainer):
    # The bytes swapped below the ORM with the (sealed) hash column kept: the worker's check
    # before a run no longer applies to a finished run, verify_integrity hashes them again.
    run = finished(moments, maintainer)
    tamper(run, bundle=bundle(build="echo another bundle\n"))
    code, out = verify()
    assert code == 1
    assert f"PROBLEM bundle run {run.pk} (version {moments.pk}): its bundle's bytes do not match its SHA-256" in out
