"""Reading frozen objects through their hashes, and reporting what does not match.

Every read of a frozen ledger's or a ground-truth version's stored canonical JSON, for
serving, union, agreement, export or scoring, goes through ``frozen_document`` (or
``verified_version``): the stored text is hashed again and compared with the stored
SHA-256 (and, for a version, its manifest with ``manifest_sha256``). A mismatch raises
``TamperedData``: the API answers ``500 {"error": {"code": "integrity_error", ...}}``
naming the object, the changed data is never used, and the failure is logged at
CRITICAL and appended to the audit log (``audit_integrity_failure``).

``manage.py verify_integrity`` goes further (the audit chain, the hashes the audit log
recorded at freeze and publish time, the manifests); see ``annotator.reads.verify``.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator

from django.db import connection

from annotator.base.canonical import canonical_sha256, sha256_hex
from annotator.base.errors import WorkflowError
from annotator.base.seals import EVENT_COLUMNS, events_seal_of_values, packet_content, row_seal
from annotator.models import (
    AgreementReport,
    AuditEntry,
    BundleRun,
    Decision,
    GroundTruthVersion,
    Ledger,
    Packet,
    ScoringRun,
    Submission,
    SubmissionScore,
    Union,
    VersionCalibration,
    VersionReadiness,
    Video,
)
from annotator.models.audit_log import append_entry

logger = logging.getLogger("annotator.reads.integrity")


class TamperedData(WorkflowError):
    """Stored data of a frozen object does not match the hash recorded for it."""

    status = 500
    code = "integrity_error"

    def __init__(self, obj, problem: str, *, expected: str = "", actual: str = ""):
        self.object_label = f"{obj._meta.label}:{obj.pk}"
        self.object_type, self.object_id = obj._meta.label, str(obj.pk)
        self.packet_id = getattr(obj, "packet_id", None)
        self.expected, self.actual, self.problem = expected, actual, problem
        self.audited = False
        super().__init__(
            f"integrity error: {describe(obj)}: {problem}; the stored data was changed outside FrameLedger "
            "and is not served (run manage.py verify_integrity)"
        )


def describe(obj) -> str:
    if isinstance(obj, Ledger):
        return f"frozen ledger {obj.pk} (packet {obj.packet_id}, side {obj.side})"
    if isinstance(obj, GroundTruthVersion):
        return f"version {obj.pk} (packet {obj.packet_id}, {obj.tier} v{obj.number})"
    if isinstance(obj, SubmissionScore):
        return f"score {obj.pk} (run {obj.run_id}, submission {obj.submission_id})"
    if isinstance(obj, ScoringRun):
        return f"scoring run {obj.pk} (version {obj.version_id})"
    if isinstance(obj, Submission):
        return f"submission {obj.pk} (packet {obj.packet_id})"
    if isinstance(obj, Decision):
        return f"decision {obj.pk} (union item {obj.item_id})"
    if isinstance(obj, Union):
        return f"union {obj.pk} (packet {obj.packet_id})"
    if isinstance(obj, BundleRun):
        return f"bundle run {obj.pk} (version {obj.version_id})"
    if isinstance(obj, Packet):
        return f"packet {obj.pk}"
    if isinstance(obj, AgreementReport):
        return f"agreement report {obj.pk} (packet {obj.packet_id})"
    if isinstance(obj, VersionCalibration):
        return f"calibration {obj.pk} (version {obj.version_id}, {obj.scorer_id})"
    if isinstance(obj, VersionReadiness):
        return f"readiness mark {obj.pk} (version {obj.version_id})"
    if isinstance(obj, Video):
        return f"video {obj.pk}"
    return f"{obj._meta.label} {obj.pk}"


def content_problem(obj) -> tuple[str, str, str] | None:
    """(problem, expected, actual) when the stored canonical JSON does not match its hash."""
    actual = sha256_hex(obj.canonical_json.encode("utf-8"))
    if actual != obj.sha256:
        return "canonical JSON does not match its SHA-256", obj.sha256, actual
    return None


def manifest_problem(version: GroundTruthVersion) -> tuple[str, str, str] | None:
    _, actual = canonical_sha256(version.manifest)
    if actual != version.manifest_sha256:
        return "manifest does not match its SHA-256", version.manifest_sha256, actual
    named = str(version.manifest.get("ground_truth_sha256"))
    if named != version.sha256:
        return "manifest names another ground-truth SHA-256", version.sha256, named
    # The columns access decisions read (who may see a tier, which packet, which number).
    for column, key in (("packet_id", "packet"), ("tier", "tier"), ("number", "version")):
        if getattr(version, column) != version.manifest.get(key):
            return (
                f"{column} differs from the manifest's {key}",
                str(version.manifest.get(key)),
                str(getattr(version, column)),
            )
    return None


def events_problem(
    ledger: Ledger, recorded: list[dict] | None = None, rows: list[tuple] | None = None, *, whole: bool = True
) -> tuple[str, str, str] | None:
    """A frozen ledger's event rows against its (hashed) canonical document (an event
    added, removed, moved in or changed after the freeze) and against the seal of the rows
    its freeze recorded (``recorded``: the freeze entries' hashes, looked up when not given):
    a uid, an order or a time changed too. Freezes from before row seals carry none.
    ``rows``: the rows as ``ledger_event_values`` reads them, when the caller has them.
    ``whole=False`` (a read that serves the rows): where the freeze recorded a seal of the
    rows, the seal alone, which pins every column of every row as frozen (the document was
    made from those rows and is checked by its own hash); ``verify_integrity`` checks both."""

    def key(data) -> str:
        return canonical_sha256(data)[1]

    recorded = recorded_hashes(ledger) if recorded is None else recorded
    seals = [hashes["events"] for hashes in recorded if "events" in hashes]
    rows = ledger_event_values(ledger) if rows is None else rows
    if whole or not seals:
        stored = sorted(key(e) for e in json.loads(ledger.canonical_json).get("events", []))
        found = sorted(key(row[EVENT_COLUMNS.index("data")]) for row in rows)
        if found != stored:
            return "its event rows differ from its frozen document", f"{len(stored)} events", f"{len(found)} event rows"
    if seals:
        actual = events_seal_of_values(rows)
        if actual not in seals:
            return "its event rows differ from the seal its freeze recorded", seals[0], actual
    return None


def ledger_event_values(ledger: Ledger) -> list[tuple]:
    """A ledger's event rows in its order, as tuples of ``seals.EVENT_COLUMNS``."""
    return list(ledger.events.order_by("created_at", "id").values_list(*EVENT_COLUMNS))


def verified_frozen_rows(ledger: Ledger) -> list[tuple]:
    """A frozen ledger's event rows (``ledger_event_values``), read once, served only once its
    document matches its hash and the rows the seal its freeze recorded."""
    found = content_problem(ledger)
    recorded = recorded_hashes(ledger) if found is None else []
    if found is None:
        found = recorded_problem(ledger, recorded)
    rows = ledger_event_values(ledger) if found is None else []
    if found is None:
        found = events_problem(ledger, recorded, rows, whole=False)
    if found is not None:
        raise fail(ledger, found)
    return rows


def seal_problem(obj, recorded: str | None) -> tuple[str, str, str] | None:
    """The row's seal (its columns, ``annotator.base.seals``) against the one recorded."""
    if recorded is None:
        return None
    actual = row_seal(obj)
    if actual != recorded:
        return "its columns differ from the seal the audit log recorded", recorded, actual
    return None


# The audit operations that record a frozen object's hashes, and the key of each hash.
RECORDING_OPERATIONS = {
    Ledger: (["freeze_ledger"], "ledger"),
    GroundTruthVersion: (["publish_adjudicated_version", "publish_provisional_version"], "version"),
}


def authentic(entries: Iterable[AuditEntry]) -> Iterator[AuditEntry]:
    """The entries that are what FrameLedger appended: fields matching their SHA-256 and a
    signature by a trusted key (``AuditEntry.signature_problem``). Every hash and seal a read
    compares with comes through here, so an entry appended or edited by someone without the
    signing key is never believed (``verify_integrity`` names it)."""
    for entry in entries:
        if entry.signature_problem() is None:
            yield entry


def recorded_hashes(obj) -> list[dict]:
    operations, _ = RECORDING_OPERATIONS[type(obj)]
    entries = AuditEntry.objects.filter(object_type=obj._meta.label, object_id=str(obj.pk), operation__in=operations)
    return [entry.hashes for entry in authentic(entries.order_by("seq"))]


def recorded_problem(obj, recorded: list[dict] | None = None) -> tuple[str, str, str] | None:
    """The stored hash against the one the audit log recorded when the object was frozen
    or published (``recorded``: those entries' hashes, looked up when not given).
    Catches content rewritten together with its hash."""
    _, key = RECORDING_OPERATIONS[type(obj)]
    recorded = recorded_hashes(obj) if recorded is None else recorded
    if not recorded:
        return "no freeze or publish record in the audit log", "an audit record", "none"
    if obj.sha256 not in [hashes.get(key) for hashes in recorded]:
        return "SHA-256 differs from the one the audit log recorded", str(recorded[0].get(key)), obj.sha256
    manifests = {hashes.get("manifest") for hashes in recorded} - {None}
    if isinstance(obj, GroundTruthVersion) and manifests and obj.manifest_sha256 not in manifests:
        return "manifest SHA-256 differs from the one the audit log recorded", min(manifests), obj.manifest_sha256
    seals = [hashes["row"] for hashes in recorded if "row" in hashes]
    if seals and row_seal(obj) not in seals:  # entries from before row seals carry none
        return "its columns differ from the seal the audit log recorded", seals[0], row_seal(obj)
    return None


def fail(obj, found: tuple[str, str, str]) -> TamperedData:
    problem, expected, actual = found
    exc = TamperedData(obj, problem, expected=expected, actual=actual)
    logger.critical("%s (expected %s, found %s)", exc.message, expected, actual)
    if not connection.in_atomic_block:
        # Inside a transaction the caller's rollback would take the entry with it;
        # the API's error handler records it once the transaction is over.
        audit_integrity_failure(exc)
    return exc


def frozen_document(obj: Ledger | GroundTruthVersion) -> dict:
    """The verified canonical document of a frozen ledger or a version."""
    if isinstance(obj, Ledger) and not obj.is_frozen:
        raise ValueError(f"ledger {obj.pk} is not frozen; it has no canonical document yet")
    found = content_problem(obj)
    if found is None and isinstance(obj, GroundTruthVersion):
        found = manifest_problem(obj)
    recorded = recorded_hashes(obj) if found is None else []
    if found is None:
        found = recorded_problem(obj, recorded)
    if found is None and isinstance(obj, Ledger):
        found = events_problem(obj, recorded)
    if found is not None:
        raise fail(obj, found)
    return json.loads(obj.canonical_json)


def verified_access_columns(version: GroundTruthVersion) -> GroundTruthVersion:
    """The version, once the columns access decisions read (packet, tier, number) match its
    hashed manifest and its row matches the seal recorded at publication: a tier flipped by
    SQL is an integrity error, never a release. Cheaper than ``frozen_document`` (the
    content is not hashed again; every read of the events does that)."""
    found = manifest_problem(version) or recorded_problem(version)
    if found is not None:
        raise fail(version, found)
    verified_packet(version.packet)  # what the version's events mean (parameters, frame rate, schema)
    return version


def ledger_state_problems(ledgers: list[Ledger]) -> list[tuple[Ledger, tuple[str, str, str]]]:
    """Frozen state against the audit log: a ledger frozen without a freeze record, one
    whose frozen columns differ from the seal recorded, or one unfrozen after its freeze."""
    records = defaultdict(list)
    entries = AuditEntry.objects.filter(
        object_type=Ledger._meta.label, object_id__in=[str(ledger.pk) for ledger in ledgers], operation="freeze_ledger"
    )
    for entry in authentic(entries.order_by("seq")):
        records[entry.object_id].append(entry.hashes)
    found = []
    for ledger in ledgers:
        recorded = records.get(str(ledger.pk), [])
        if ledger.is_frozen:
            problem = recorded_problem(ledger, recorded)
        else:
            problem = ("unfrozen after its freeze", "frozen", "not frozen") if recorded else None
        if problem is not None:
            found.append((ledger, problem))
    return found


def packet_problem(packet: Packet, recorded: list | None = None) -> tuple[str, str, str] | None:
    """The packet's content (title, its video's SHA-256, frame count and frame rate, the task
    kind's slug, schema and scorer, instructions, parameters: ``seals.packet_content``) against
    its SHA-256, and that against the one its ``create_packet`` entry recorded (``recorded``:
    those entries' hashes, looked up when not given). A parameter, a frame rate or a task kind's
    schema changed by SQL changes what every frozen ledger and version of the packet means."""
    content = packet_content(
        title=packet.title,
        video=packet.video,
        task_kind=packet.task_kind,
        instructions=packet.instructions,
        parameters=packet.parameters,
    )
    actual = canonical_sha256(content)[1]
    if actual != packet.sha256:
        problem = "its content (video, task kind schema or scorer, parameters) differs from its SHA-256"
        return problem, packet.sha256, actual
    if recorded is None:
        entries = AuditEntry.objects.filter(object_type=Packet._meta.label, object_id=str(packet.pk))
        recorded = [entry.hashes for entry in authentic(entries.filter(operation="create_packet").order_by("seq"))]
    if not recorded:
        return "no create record in the audit log", "a create record", "none"
    if packet.sha256 not in [hashes.get("packet") for hashes in recorded]:
        return "SHA-256 differs from the one the audit log recorded", str(recorded[0].get("packet")), packet.sha256
    return None


def verified_packet(packet: Packet) -> Packet:
    found = packet_problem(packet)
    if found is not None:
        raise fail(packet, found)
    return packet


SIDES = ("A", "B")


def ledgers_by_side(packet, ledgers: Iterable[Ledger]) -> dict[str, Ledger]:
    """The packet's two ledgers by side. A packet is made with exactly one ledger A and one
    ledger B, never changed since: a side changed, a ledger deleted or added by SQL is an
    integrity error naming the packet (never a ``KeyError`` answered as a 500 of another kind,
    never a packet read with one ledger left out)."""
    found: dict[str, Ledger] = {}
    sides = []
    for ledger in ledgers:
        sides.append(str(ledger.side))
        found.setdefault(ledger.side, ledger)
    if sorted(sides) != list(SIDES):
        found_sides = ", ".join(sorted(sides)) or "none"
        raise fail(packet, ("its ledgers are not one side A and one side B", "A, B", found_sides))
    return found


def verify_ledger_states(ledgers: list[Ledger]) -> list[Ledger]:
    for ledger, problem in ledger_state_problems(ledgers):
        raise fail(ledger, problem)
    return ledgers


def frozen_events(obj: Ledger | GroundTruthVersion) -> list[dict]:
    return frozen_document(obj)["events"]


def verified_version(version: GroundTruthVersion) -> GroundTruthVersion:
    """The version itself, once its content and manifest match their hashes."""
    frozen_document(version)
    return version


def audit_integrity_failure(exc: TamperedData) -> None:
    """Append the failure to the audit log (once per exception)."""
    if exc.audited:
        return
    append_entry(
        actor_id=None,
        operation="integrity_error",
        object_type=exc.object_type,
        object_id=exc.object_id,
        packet_id=exc.packet_id,
        hashes={"expected": exc.expected, "found": exc.actual},
        details={"problem": exc.problem},
    )
    exc.audited = True
