"""Derived rows a sealed thing's meaning rests on, forged with the database alone: a stored
agreement report, a version's calibration anchors and a readiness mark, each changed (or
inserted) with the triggers off, its seal recomputed exactly as FrameLedger computes it and
recorded in an audit entry appended at the chain head (linked and hashed as FrameLedger does),
unsigned, or signed with the forger's own key. Every read that would use the row answers
``integrity_error`` (never the forgery, never another 500), and ``verify_integrity`` names the
row and the forged entry. Run on SQLite and on PostgreSQL (``DATABASE_URL``)."""

from __future__ import annotations

import pytest
from django.db.models import QuerySet

from annotator.base.seals import row_seal
from annotator.models import AgreementReport, VersionCalibration, VersionReadiness
from annotator.reads.integrity import describe
from tests.factories import client_for
from tests.grading.conftest import adjudicated  # noqa: F401 (the fixture: its derived work done after commit)
from tests.integrity.tampering import forge_entry, tamper, triggers_off, verify
from tests.integrity.test_forgery_without_the_key import (
    FORGERS,
    assert_integrity_error,
    assert_named,
    forged_entry_name,
    signer,
)

pytestmark = pytest.mark.django_db


def insert(model, **columns) -> None:
    """INSERT a row past every guard and trigger, with no audit entry."""
    with triggers_off(model._meta.db_table):
        QuerySet(model=model).bulk_create([model(**columns)])


@pytest.mark.parametrize("forger", FORGERS)
def test_a_stored_agreement_report_rewritten_and_resealed_is_never_served(forger, adjudicated, maintainer):  # noqa: F811
    packet = adjudicated.packet
    client = client_for(maintainer)
    url = f"/api/packets/{packet.pk}/agreement/"
    assert client.get(url).json()["a_vs_b"]["a_as_prediction"]["reward"] == 0.333333
    report = AgreementReport.objects.get(version=adjudicated)
    forged = {**report.report, "a_vs_b": {**report.report["a_vs_b"], "a_as_prediction": {"reward": 0.99}}}
    tamper(report, report=forged)
    report.refresh_from_db()
    entry = forge_entry(
        "agreement_report", report, packet_id=packet.pk, hashes={"row": row_seal(report)}, **signer(forger)
    )

    assert_integrity_error(client, url)
    assert_named(describe(report), forged_entry_name(entry))


@pytest.mark.parametrize("forger", FORGERS)
def test_calibration_anchors_rewritten_and_resealed_are_never_used(forger, adjudicated, maintainer):  # noqa: F811
    client = client_for(maintainer)
    calibration = VersionCalibration.objects.get(version=adjudicated)
    anchors = [{**row, "reward": 0.5} if row["name"] == "empty" else row for row in calibration.anchors]
    tamper(calibration, anchors=anchors, problems=["forged"], status="blocked")
    calibration.refresh_from_db()
    entry = forge_entry("compute_calibration", calibration, hashes={"row": row_seal(calibration)}, **signer(forger))

    # The calibration page, the leaderboard's reference rows, and marking the version ready.
    assert_integrity_error(client, f"/api/versions/{adjudicated.pk}/calibration/")
    assert_integrity_error(client, f"/api/versions/{adjudicated.pk}/leaderboard/")
    assert_integrity_error(client, f"/api/versions/{adjudicated.pk}/ready/", method="post")
    assert not VersionReadiness.objects.exists()
    assert_named(describe(calibration), forged_entry_name(entry))


def test_a_calibration_inserted_without_a_seal_is_never_used(adjudicated, maintainer):  # noqa: F811
    genuine = VersionCalibration.objects.get(version=adjudicated)
    insert(
        VersionCalibration, version=adjudicated, scorer_id="moment-utility-v1", params={}, anchors=genuine.anchors,
        status="ok", problems=[], scorer_code_sha256=genuine.scorer_code_sha256,
    )  # fmt: skip
    forged = VersionCalibration.objects.get(version=adjudicated, scorer_id="moment-utility-v1")
    assert_integrity_error(client_for(maintainer), f"/api/versions/{adjudicated.pk}/calibration/")
    assert_named(describe(forged))


@pytest.mark.parametrize("forger", [*FORGERS, "no entry"])
def test_a_readiness_mark_added_by_sql_never_opens_grading(forger, adjudicated, maintainer):  # noqa: F811
    """The version is not marked ready; a forged mark must not let a scoring run start."""
    packet = adjudicated.packet
    insert(VersionReadiness, version=adjudicated, scorer_id=packet.task_kind.scorer_id, anchors=[], marked_by=None)
    readiness = VersionReadiness.objects.get(version=adjudicated)
    names = [describe(readiness)]
    if forger != "no entry":
        hashes = {"version": adjudicated.sha256, "readiness": row_seal(readiness)}
        entry = forge_entry("mark_version_ready", adjudicated, packet_id=packet.pk, hashes=hashes, **signer(forger))
        names.append(forged_entry_name(entry))
    client = client_for(maintainer)
    assert_integrity_error(client, f"/api/versions/{adjudicated.pk}/calibration/")
    response = client.post(
        f"/api/packets/{packet.pk}/scoring-runs/", {"version": adjudicated.pk}, content_type="application/json"
    )
    assert response.status_code == 500 and response.json()["error"]["code"] == "integrity_error", response.content
    assert_named(*names)


def test_a_genuine_readiness_mark_with_its_anchors_changed_is_refused(adjudicated, maintainer):  # noqa: F811
    client = client_for(maintainer)
    assert client.post(f"/api/versions/{adjudicated.pk}/ready/").status_code == 201
    readiness = VersionReadiness.objects.get(version=adjudicated)
    tamper(readiness, anchors=[{"name": "oracle", "reward": 0.5}])
    assert_integrity_error(client, f"/api/versions/{adjudicated.pk}/calibration/")
    assert_named(describe(readiness))


def test_untouched_derived_rows_read_and_verify(adjudicated, maintainer):  # noqa: F811
    client = client_for(maintainer)
    assert client.get(f"/api/packets/{adjudicated.packet.pk}/agreement/").status_code == 200
    assert client.get(f"/api/versions/{adjudicated.pk}/leaderboard/").status_code == 200
    assert client.post(f"/api/versions/{adjudicated.pk}/ready/").status_code == 201
    assert client.get(f"/api/versions/{adjudicated.pk}/calibration/").json()["ready"]["marked_by"] == "maintainer"
    code, out = verify()
    assert code == 0, out
