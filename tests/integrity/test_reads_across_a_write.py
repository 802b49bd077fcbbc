"""A read that straddles a write is not tampering (annotator.reads.sealed_rows.settled).

Each statement sees what was committed when it began, so a row read just before a writer
commits and its seals read just after differ without anyone having changed anything: a
bundle run's page read while the run is running, then checked against the seal of its end.
Those reads must show the row as it now stands; a row changed below the ORM must still be
refused however it was read. Each case makes the interleaving happen in one process, in the
order the two connections would see it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator.actions import bundles
from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions, run_chunks
from annotator.base.canonical import sha256_hex
from annotator.base.grading.uploads import SubmissionFile
from annotator.models import BundleRun, ScoringRun
from annotator.reads import sealed_rows
from annotator.reads.integrity import TamperedData
from annotator.reads.verify import sealed_row_problems
from tests.factories import client_for
from tests.grading.test_bundles import synthetic_version
from tests.integrity.tampering import tamper
from tests.integrity.test_sealed_bundle_runs import rows_for, stage, submitted

pytestmark = pytest.mark.django_db


@pytest.fixture
def moments(maintainer, annotator_a, annotator_b, adjudicator, tmp_path):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(tmp_path))
    return version


def running(version, maintainer) -> BundleRun:
    run = submitted(version, maintainer)
    assert bundles._claim(run.pk)
    return BundleRun.objects.select_related("version__packet").defer("bundle").get(pk=run.pk)


def end(run: BundleRun, version) -> BundleRun:
    """The worker's end of ``run``, on an object of its own (the reader's stays as read)."""
    fresh = BundleRun.objects.select_related("version__packet").get(pk=run.pk)
    return bundles._score(fresh, [stage("build"), stage("call-1", rows=3)], rows_for(version), {})


def test_a_run_read_while_running_and_checked_after_it_ended_reads_as_ended(moments, maintainer):
    seen = running(moments, maintainer)
    assert seen.status == "running"
    assert end(seen, moments).status == "done"
    sealed_rows.verify_bundle_runs([seen])  # before: the running row against the seal of its end
    assert seen.status == "done" and seen.score_id is not None  # the caller shows the run as it stands


def test_a_run_read_while_running_then_ended_and_changed_by_sql_is_refused(moments, maintainer):
    seen = running(moments, maintainer)
    ended = end(seen, moments)
    tamper(ended, outcome="changed by hand")
    with pytest.raises(TamperedData, match="differ from the seal"):
        sealed_rows.verify_bundle_runs([seen])


def test_a_run_changed_by_sql_is_refused_when_read_after_it(moments, maintainer):
    ended = end(running(moments, maintainer), moments)
    tamper(ended, outcome="changed by hand")
    seen = BundleRun.objects.defer("bundle").get(pk=ended.pk)
    with pytest.raises(TamperedData, match="differ from the seal"):
        sealed_rows.verify_bundle_runs([seen])


def test_the_bundle_runs_api_reads_a_run_that_ends_between_its_row_and_its_seals(moments, maintainer, monkeypatch):
    run = running(moments, maintainer)
    seals_of = sealed_rows.bundle_seals

    def seals_after_the_end(run_ids):
        ids = list(run_ids)
        if BundleRun.objects.get(pk=run.pk).status == "running":
            end(run, moments)  # the worker commits between the page's two reads
        return seals_of(ids)

    monkeypatch.setattr(sealed_rows, "bundle_seals", seals_after_the_end)
    response = client_for(maintainer).get(f"/api/bundle-runs/{run.pk}/")
    assert response.status_code == 200, response.content[:400]
    assert response.json()["status"] == "done"


def scoring_run(version, maintainer) -> ScoringRun:
    content = rows_for(version)
    file = SubmissionFile(label="agent", name="a.jsonl", content=content, sha256=sha256_hex(content), size=len(content))
    [submission] = do_upload_submissions(version.packet, [file], actor=maintainer)
    return do_start_scoring_run(version, [submission], actor=maintainer, dispatch=False)


def test_a_scoring_run_read_while_running_and_checked_after_it_finished(moments, maintainer):
    run = scoring_run(moments, maintainer)
    seen = ScoringRun.objects.get(pk=run.pk)
    for chunk in run_chunks(run):
        do_score_batch(run.pk, chunk)
    assert seen.finished_at is None and ScoringRun.objects.get(pk=run.pk).finished_at is not None
    sealed_rows.verify_runs([seen])  # before: the running row against the seal of its finish
    assert seen.finished_at == ScoringRun.objects.get(pk=run.pk).finished_at


def test_verify_integrity_names_no_run_that_ended_after_it_read_the_seals(moments, maintainer, monkeypatch):
    run = running(moments, maintainer)
    seals_of = sealed_rows.bundle_seals

    def seals_then_the_end(run_ids=None):
        found = seals_of(run_ids)
        if run_ids is None:  # the scan's read of every seal: the run ends just after it
            end(run, moments)
        return found

    monkeypatch.setattr(sealed_rows, "bundle_seals", seals_then_the_end)
    assert sealed_row_problems() == []
    tamper(run, outcome="changed by hand")
    [problem] = sealed_row_problems()
    assert f"bundle run {run.pk}" in str(problem)


def test_a_scoring_run_is_finished_with_its_seal_or_not_at_all(moments, maintainer, monkeypatch):
    from annotator.actions import grading
    from annotator.models import AuditEntry

    run = scoring_run(moments, maintainer)
    real_record = grading.record

    def record_that_fails_at_the_finish(actor, operation, *args, **kwargs):
        if operation == "finish_scoring_run":
            raise RuntimeError("the worker died before the seal of the finish was written")
        return real_record(actor, operation, *args, **kwargs)

    monkeypatch.setattr(grading, "record", record_that_fails_at_the_finish)
    with pytest.raises(RuntimeError):
        for chunk in run_chunks(run):
            do_score_batch(run.pk, chunk)
    assert ScoringRun.objects.get(pk=run.pk).finished_at is None  # not a finished row without its seal
    monkeypatch.setattr(grading, "record", real_record)
    grading.update_progress(ScoringRun.objects.select_related("version__packet").get(pk=run.pk))
    assert ScoringRun.objects.get(pk=run.pk).finished_at is not None
    assert AuditEntry.objects.filter(operation="finish_scoring_run", object_id=str(run.pk)).count() == 1
    assert sealed_row_problems() == []
