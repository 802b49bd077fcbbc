"""Whole-database integrity verification (``manage.py verify_integrity``, check E011,
the version page's badge). Reads only; reports problems, each naming its object.

What is checked:

- every frozen ledger: its canonical JSON against its SHA-256, and that SHA-256
  against the one the audit log recorded when it was frozen;
- every ground-truth version: its canonical JSON against its SHA-256, its manifest
  against ``manifest_sha256``, the manifest's ``ground_truth_sha256`` and event count,
  and both hashes against the ones the audit log recorded when it was published;
- every sealed row (``annotator.base.seals``): a frozen ledger's and a version's columns, a
  frozen ledger's event rows against its document, every submission (and its bytes against
  its SHA-256), scoring run, final score, decision, union (with its items) and bundle run
  against the seal its audit entry recorded, and every row the audit log sealed still there;
- every stored agreement report, calibration and readiness mark against its seal
  (``annotator.reads.sealed_derived``);
- every chain head anchored outside the database (``annotator.reads.anchors``) still in the chain;
- the audit log's hash chain: ``seq`` runs 1, 2, 3... with no gap (a deleted entry),
  each entry links to the previous one's SHA-256 and its own SHA-256 matches its fields.

Rewriting a row *and* its hash is caught by the audit cross-check; rewriting the audit
entry too breaks the chain from there on. Only rewriting the whole chain after the
change would go unseen, so the command prints the chain head for the operator to keep
somewhere else (and compare with ``--expect-head``).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass

from annotator.models import (
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
    Video,
)
from annotator.reads import sealed_derived, sealed_rows
from annotator.reads.anchors import anchor_problems, first_anchors
from annotator.reads.chain import chain_pass
from annotator.reads.integrity import (
    RECORDING_OPERATIONS,
    authentic,
    content_problem,
    describe,
    events_problem,
    manifest_problem,
    packet_problem,
    recorded_problem,
)
from annotator.reads.sealed_media import media_problems


@dataclass(frozen=True)
class Problem:
    obj: str
    message: str

    def __str__(self) -> str:
        return f"{self.obj}: {self.message}"


def all_recorded_hashes() -> dict[tuple[str, str], list[dict]]:
    """The hashes the audit log recorded at freeze and publish time, by (type, id)."""
    found: dict[tuple[str, str], list[dict]] = defaultdict(list)
    operations = [op for ops, _ in RECORDING_OPERATIONS.values() for op in ops]
    entries = AuditEntry.objects.filter(operation__in=operations).order_by("seq")
    for entry in authentic(entries.iterator(chunk_size=2000)):
        found[(entry.object_type, entry.object_id)].append(entry.hashes)
    return found


def _problems(obj, checks) -> list[Problem]:
    name = describe(obj)
    return [Problem(name, f"{found[0]} (expected {found[1]}, found {found[2]})") for found in checks if found]


def ledger_problems(ledger: Ledger, recorded: list[dict] | None = None) -> list[Problem]:
    found = [content_problem(ledger), recorded_problem(ledger, recorded)]
    if not any(found):
        found.append(events_problem(ledger, recorded))
    return _problems(ledger, found)


def version_problems(version: GroundTruthVersion, recorded: list[dict] | None = None) -> list[Problem]:
    """Content, manifest, event count and publish record of one version (the version
    page's badge calls this with ``recorded`` None: one audit query)."""
    found = [content_problem(version), manifest_problem(version), recorded_problem(version, recorded)]
    if not any(found):
        events = len(json.loads(version.canonical_json)["events"])
        if version.manifest.get("events") != events:
            found.append(("manifest's event count is wrong", str(events), str(version.manifest.get("events"))))
    return _problems(version, found)


def audit_chain_problems() -> tuple[list[Problem], tuple[int, str]]:
    """Problems of the chain, and its head (seq, sha256): one pass (``annotator.reads.chain``)."""
    checked = chain_pass()
    return [Problem(obj, message) for obj, message in checked.sorted_problems()], checked.head


@dataclass
class Report:
    problems: list[Problem]
    ledgers: int
    versions: int
    entries: int
    head: tuple[int, str]


def verify_all() -> Report:
    recorded = all_recorded_hashes()
    problems: list[Problem] = []
    ledgers = Ledger.objects.filter(frozen_at__isnull=False).order_by("pk")
    for ledger in ledgers.iterator(chunk_size=200):
        problems += ledger_problems(ledger, recorded.get((Ledger._meta.label, str(ledger.pk)), []))
    versions = GroundTruthVersion.objects.order_by("pk")
    for version in versions.iterator(chunk_size=50):
        problems += version_problems(version, recorded.get((GroundTruthVersion._meta.label, str(version.pk)), []))
    problems += packet_problems()
    problems += missing_objects(recorded)
    problems += sealed_row_problems()
    problems += [Problem(obj, message) for obj, message in sealed_derived.all_problems()]
    anchored = first_anchors()
    checked = chain_pass(keep=anchored)
    problems += [Problem(obj, message) for obj, message in anchor_problems(anchored, checked.stored)]
    chain = [Problem(obj, message) for obj, message in checked.sorted_problems()]
    return Report(problems + chain, ledgers.count(), versions.count(), checked.entries, checked.head)


def packet_problems() -> list[Problem]:
    """Every packet's content against its SHA-256 and its ``create_packet`` record."""
    recorded: dict[str, list[dict]] = defaultdict(list)
    entries = AuditEntry.objects.filter(object_type=Packet._meta.label, operation="create_packet").order_by("seq")
    for entry in authentic(entries.iterator(chunk_size=2000)):
        recorded[entry.object_id].append(entry.hashes)
    packets = Packet.objects.select_related("video", "task_kind").order_by("pk")
    return [
        problem
        for packet in packets.iterator(chunk_size=500)
        for problem in _problems(packet, [packet_problem(packet, recorded.get(str(packet.pk), []))])
    ]


def missing_objects(recorded: dict[tuple[str, str], list[dict]]) -> list[Problem]:
    """Objects the audit log says were frozen or published that are gone or unfrozen."""
    frozen_ledgers = {str(pk) for pk in Ledger.objects.filter(frozen_at__isnull=False).values_list("pk", flat=True)}
    versions = {str(pk) for pk in GroundTruthVersion.objects.values_list("pk", flat=True)}
    problems = []
    for object_type, object_id in sorted(recorded):
        if object_type == Ledger._meta.label and object_id not in frozen_ledgers:
            problems.append(Problem(f"ledger {object_id}", "frozen in the audit log, now missing or unfrozen"))
        if object_type == GroundTruthVersion._meta.label and object_id not in versions:
            problems.append(Problem(f"version {object_id}", "published according to the audit log, now missing"))
    return problems


def sealed_row_problems() -> list[Problem]:
    """Every submission, scoring run, final score, decision, union and bundle run against its
    seal, and every sealed row still present (``annotator.reads.sealed_rows``)."""
    problems: list[Problem] = []
    batches, runs, decisions = sealed_rows.batch_seals(), sealed_rows.run_seals(), sealed_rows.decision_seals()
    unions, bundle_runs = sealed_rows.union_seals(), sealed_rows.bundle_seals()

    def check(rows, problem_of, seals, seals_of):
        # Seals were read before the rows: a row written since then is read again with its
        # own seals before it counts as a problem (``sealed_rows.settled``).
        for row in rows.iterator(chunk_size=500):
            found = sealed_rows.settled(row, problem_of(row, seals), problem_of, seals_of)
            if found is not None:
                problems.append(Problem(describe(row), f"{found[0]} (expected {found[1]}, found {found[2]})"))

    check(Submission.objects.order_by("pk"), sealed_rows.submission_problem, batches, sealed_rows.submission_seals_of)
    check(ScoringRun.objects.order_by("pk"), sealed_rows.run_problem, runs, sealed_rows.run_seals_of)
    check(SubmissionScore.objects.order_by("pk"), sealed_rows.score_problem, runs, sealed_rows.score_seals_of)
    check(Decision.objects.order_by("pk"), sealed_rows.decision_problem, decisions, sealed_rows.decision_seals_of)
    check(Union.objects.order_by("pk"), sealed_rows.union_problem, unions, sealed_rows.union_seals_of)
    bundle_rows = BundleRun.objects.defer("bundle").order_by("pk")
    check(bundle_rows, sealed_rows.bundle_run_problem, bundle_runs, sealed_rows.bundle_seals_of)
    problems += bundle_byte_problems()
    present = {
        "submission": {str(pk) for pk in Submission.objects.values_list("pk", flat=True)},
        "scoring run": {str(pk) for pk in ScoringRun.objects.values_list("pk", flat=True)},
        "score": {str(pk) for pk in SubmissionScore.objects.values_list("pk", flat=True)},
        "decision": {str(pk) for pk in Decision.objects.values_list("pk", flat=True)},
        "union": {str(pk) for pk in Union.objects.values_list("pk", flat=True)},
        "bundle run": {str(pk) for pk in BundleRun.objects.values_list("pk", flat=True)},
    }
    sealed = {
        "submission": {pk for batch in batches.values() for pk in batch.rows},
        "scoring run": set(runs),
        "score": {pk for run in runs.values() for pk in run.scores},
        "decision": set(decisions),
        "union": set(unions),
        "bundle run": set(bundle_runs),
    }
    for kind, ids in sealed.items():
        for pk in sorted(ids - present[kind], key=int):
            problems.append(Problem(f"{kind} {pk}", "recorded in the audit log, now missing (deleted)"))
    return problems


def bundle_byte_problems() -> list[Problem]:
    """Every bundle's stored bytes against its sealed ``bundle_sha256`` (one bundle in memory
    at a time): bytes replaced with the hash column kept are named."""
    problems = []
    for pk, version_id, expected in BundleRun.objects.order_by("pk").values_list("pk", "version_id", "bundle_sha256"):
        data = BundleRun.objects.filter(pk=pk).values_list("bundle", flat=True).first()
        actual = hashlib.sha256(bytes(data or b"")).hexdigest()
        if actual != expected:
            name = f"bundle run {pk} (version {version_id})"
            problems.append(
                Problem(name, f"its bundle's bytes do not match its SHA-256 (expected {expected}, found {actual})")
            )
    return problems


def media_report() -> list[Problem]:
    """Every ready video's files hashed in full against their records (``--media``)."""
    problems = []
    for video in Video.objects.filter(status=Video.Status.READY).order_by("pk").iterator(chunk_size=100):
        problems += _problems(video, media_problems(video))
    return problems
