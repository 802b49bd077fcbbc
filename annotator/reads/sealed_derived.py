"""Derived rows read through their seals: stored agreement reports, calibration anchors and
readiness marks (``annotator.base.seals``).

Each is derived from sealed inputs (frozen ledgers, a published version, the scorer), and each
changes what a sealed thing means to its reader: the agreement report is what a maintainer
reads about two frozen ledgers, the calibration anchors decide whether a version may be marked
ready and are a leaderboard's reference rows, and the readiness mark lets a version be graded
from the browser. So each is sealed when written, by a signed audit entry:

- ``agreement_report`` (the report row, ``hashes.row``);
- ``compute_calibration``, every time the anchors are computed (the calibration row as it
  then stands, ``hashes.row``; the latest entry counts, like a decision's);
- ``mark_version_ready`` (the readiness row, ``hashes.readiness``; the entry names the version).

Reads recompute the seal from the row; a row with no seal, or one that differs, is
``TamperedData`` (``integrity_error``), never served. Exceptions kept on purpose: an agreement
report stored before seals existed (its entry carries none) is not served but computed again
from the verified ledgers; a readiness mark from before seals is checked against what its entry
holds (the version's SHA-256 and the scorer).
"""

from __future__ import annotations

from collections.abc import Iterable

from annotator.models import AgreementReport, AuditEntry, GroundTruthVersion, VersionCalibration, VersionReadiness
from annotator.reads.integrity import authentic, describe, seal_problem
from annotator.reads.sealed_rows import raise_first, settled

AGREEMENT_OPERATION = "agreement_report"
CALIBRATION_OPERATION = "compute_calibration"
READY_OPERATION = "mark_version_ready"
MISSING = ("no seal for it in the audit log", "a seal", "none")


def _latest(object_type: str, operation: str, ids: Iterable | None) -> dict[str, dict]:
    """The hashes of the latest authentic ``operation`` entry per object id."""
    entries = AuditEntry.objects.filter(object_type=object_type, operation=operation)
    if ids is not None:
        entries = entries.filter(object_id__in=sorted({str(pk) for pk in ids}))
    found: dict[str, dict] = {}
    for entry in authentic(entries.order_by("seq").iterator(chunk_size=2000)):
        found[entry.object_id] = entry.hashes
    return found


def agreement_seals(ids: Iterable | None = None) -> dict[str, dict]:
    return _latest(AgreementReport._meta.label, AGREEMENT_OPERATION, ids)


def calibration_seals(ids: Iterable | None = None) -> dict[str, dict]:
    return _latest(VersionCalibration._meta.label, CALIBRATION_OPERATION, ids)


def readiness_seals(version_ids: Iterable | None = None) -> dict[str, dict]:
    """By version id (the ``mark_version_ready`` entry names the version)."""
    return _latest(GroundTruthVersion._meta.label, READY_OPERATION, version_ids)


# ------------------------------------------------------------------ problems per row


def agreement_problem(report: AgreementReport, seals: dict[str, dict]):
    hashes = seals.get(str(report.pk))
    if hashes is None:
        return MISSING
    if "row" not in hashes:  # stored before seals: never served (``sealed_report``)
        return None
    return seal_problem(report, hashes["row"])


def calibration_problem(calibration: VersionCalibration, seals: dict[str, dict]):
    hashes = seals.get(str(calibration.pk))
    return MISSING if hashes is None or "row" not in hashes else seal_problem(calibration, hashes["row"])


def readiness_problem(readiness: VersionReadiness, seals: dict[str, dict]):
    hashes = seals.get(str(readiness.version_id))
    if hashes is None:
        return MISSING
    if "readiness" in hashes:
        return seal_problem(readiness, hashes["readiness"])
    version_sha = GroundTruthVersion.objects.filter(pk=readiness.version_id).values_list("sha256", flat=True).first()
    if hashes.get("version") != version_sha:  # a mark from before seals: what its entry holds
        return "its version differs from the one the audit log recorded", str(hashes.get("version")), str(version_sha)
    return None


# ------------------------------------------------------------------ verified reads


def agreement_seals_of(reports) -> dict[str, dict]:
    return agreement_seals(r.pk for r in reports)


def calibration_seals_of(calibrations) -> dict[str, dict]:
    return calibration_seals(c.pk for c in calibrations)


def readiness_seals_of(marks) -> dict[str, dict]:
    return readiness_seals(r.version_id for r in marks)


def sealed_report(report: AgreementReport | None) -> AgreementReport | None:
    """``report`` once verified through its seal; None for a report stored before seals
    (the caller computes it again); ``TamperedData`` when it has no seal or another one."""
    if report is None:
        return None
    raise_first([report], agreement_problem, agreement_seals_of)
    return report if "row" in agreement_seals([report.pk]).get(str(report.pk), {}) else None


def verified_calibrations(calibrations: Iterable[VersionCalibration]) -> list[VersionCalibration]:
    calibrations = list(calibrations)
    raise_first(calibrations, calibration_problem, calibration_seals_of)
    return calibrations


def verified_calibration(calibration: VersionCalibration | None) -> VersionCalibration | None:
    if calibration is not None:
        verified_calibrations([calibration])
    return calibration


def verified_readiness(readiness: VersionReadiness | None) -> VersionReadiness | None:
    """The version's readiness mark once verified (None: the version is not marked ready)."""
    if readiness is not None:
        raise_first([readiness], readiness_problem, readiness_seals_of)
    return readiness


def readiness_of(version: GroundTruthVersion) -> VersionReadiness | None:
    return verified_readiness(VersionReadiness.objects.filter(version=version).select_related("marked_by").first())


# ------------------------------------------------------------------ verify_integrity


def all_problems() -> list[tuple[str, str]]:
    """(object, message) for every agreement report, calibration and readiness mark that
    differs from its seal or has none, and every one the audit log sealed that is gone."""
    problems: list[tuple[str, str]] = []
    kinds = (
        ("agreement report", AgreementReport, agreement_problem, agreement_seals, agreement_seals_of),
        ("calibration", VersionCalibration, calibration_problem, calibration_seals, calibration_seals_of),
        ("readiness mark of version", VersionReadiness, readiness_problem, readiness_seals, readiness_seals_of),
    )
    for kind, model, problem_of, seals_all, seals_of in kinds:
        seals = seals_all()
        for row in model.objects.order_by("pk").iterator(chunk_size=500):
            found = settled(row, problem_of(row, seals), problem_of, seals_of)
            if found is not None:
                problems.append((describe(row), f"{found[0]} (expected {found[1]}, found {found[2]})"))
        key = "version_id" if model is VersionReadiness else "pk"
        present = {str(pk) for pk in model.objects.values_list(key, flat=True)}
        for object_id in sorted(set(seals) - present, key=int):
            problems.append((f"{kind} {object_id}", "recorded in the audit log, now missing (deleted)"))
    return problems
