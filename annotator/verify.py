"""Whole-database integrity verification (``manage.py verify_integrity``, check E011,
the version page's badge). Reads only; reports problems, each naming its object.

What is checked:

- every frozen ledger: its canonical JSON against its SHA-256, and that SHA-256
  against the one the audit log recorded when it was frozen;
- every ground-truth version: its canonical JSON against its SHA-256, its manifest
  against ``manifest_sha256``, the manifest's ``ground_truth_sha256`` and event count,
  and both hashes against the ones the audit log recorded when it was published;
- the audit log's hash chain: ``seq`` runs 1, 2, 3... with no gap (a deleted entry),
  each entry links to the previous one's SHA-256 and its own SHA-256 matches its fields.

Rewriting a row *and* its hash is caught by the audit cross-check; rewriting the audit
entry too breaks the chain from there on. Only rewriting the whole chain after the
change would go unseen, so the command prints the chain head for the operator to keep
somewhere else (and compare with ``--expect-head``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from annotator.integrity import content_problem, describe, manifest_problem
from annotator.models import AuditEntry, GroundTruthVersion, Ledger
from annotator.models.audit import GENESIS_SHA256


@dataclass(frozen=True)
class Problem:
    obj: str
    message: str

    def __str__(self) -> str:
        return f"{self.obj}: {self.message}"


def recorded_hashes(**only) -> dict[tuple[str, str], list[dict]]:
    """The hashes the audit log recorded for each frozen object, by (type, id)."""
    found: dict[tuple[str, str], list[dict]] = defaultdict(list)
    operations = ["freeze_ledger", "publish_adjudicated_version", "publish_provisional_version"]
    entries = AuditEntry.objects.filter(operation__in=operations, **only)
    for entry in entries.values("object_type", "object_id", "hashes"):
        found[(entry["object_type"], entry["object_id"])].append(entry["hashes"])
    return found


def ledger_problems(ledger: Ledger, recorded: dict | None = None) -> list[Problem]:
    name = describe(ledger)
    problems = []
    found = content_problem(ledger)
    if found:
        problems.append(Problem(name, f"{found[0]} (stored {found[1]}, content hashes to {found[2]})"))
    if recorded is not None:
        audited = [h.get("ledger") for h in recorded.get((Ledger._meta.label, str(ledger.pk)), [])]
        if not audited:
            problems.append(Problem(name, "no freeze_ledger entry in the audit log"))
        elif ledger.sha256 not in audited:
            problems.append(Problem(name, f"SHA-256 {ledger.sha256} differs from the one frozen ({audited[0]})"))
    return problems


def version_problems(version: GroundTruthVersion, recorded: dict | None = None) -> list[Problem]:
    name = describe(version)
    problems = []
    for found in (content_problem(version), manifest_problem(version)):
        if found:
            problems.append(Problem(name, f"{found[0]} (expected {found[1]}, found {found[2]})"))
    if not problems:
        events = len(json.loads(version.canonical_json)["events"])
        counted = version.manifest.get("events")
        if counted != events:
            problems.append(Problem(name, f"manifest counts {counted} events, the version holds {events}"))
    if recorded is not None:
        audited = recorded.get((GroundTruthVersion._meta.label, str(version.pk)), [])
        if not audited:
            problems.append(Problem(name, "no publish entry in the audit log"))
        elif version.sha256 not in [h.get("version") for h in audited]:
            problems.append(Problem(name, f"SHA-256 {version.sha256} differs from the one published"))
        elif any(h.get("manifest") not in (None, version.manifest_sha256) for h in audited):
            problems.append(Problem(name, "manifest SHA-256 differs from the one published"))
    return problems


def version_integrity(version: GroundTruthVersion) -> list[Problem]:
    """One version's problems (content, manifest, publish record): the version page's badge."""
    only = {"object_type": GroundTruthVersion._meta.label, "object_id": str(version.pk)}
    return version_problems(version, recorded_hashes(**only))


def audit_chain_problems() -> tuple[list[Problem], tuple[int, str]]:
    """Problems of the chain, and its head (seq, sha256)."""
    problems = []
    expected_seq, prev = 1, GENESIS_SHA256
    for entry in AuditEntry.objects.order_by("seq").iterator(chunk_size=2000):
        name = f"audit entry seq {entry.seq} (id {entry.pk}, {entry.operation} {entry.object_type}:{entry.object_id})"
        if entry.seq != expected_seq:
            missing = f"seq {expected_seq}" + (f"..{entry.seq - 1}" if entry.seq - 1 > expected_seq else "")
            problems.append(Problem(f"audit entry {missing}", "missing from the chain (deleted)"))
        if entry.prev_sha256 != prev:
            problems.append(Problem(name, "does not link to the previous entry's SHA-256"))
        if entry.chain_sha256() != entry.sha256:
            problems.append(Problem(name, "its fields do not match its SHA-256 (edited)"))
        expected_seq, prev = entry.seq + 1, entry.sha256
    return problems, (expected_seq - 1, prev)


@dataclass
class Report:
    problems: list[Problem]
    ledgers: int
    versions: int
    entries: int
    head: tuple[int, str]


def verify_all() -> Report:
    recorded = recorded_hashes()
    problems: list[Problem] = []
    ledgers = Ledger.objects.filter(frozen_at__isnull=False).order_by("pk")
    for ledger in ledgers.iterator(chunk_size=200):
        problems += ledger_problems(ledger, recorded)
    versions = GroundTruthVersion.objects.order_by("pk")
    for version in versions.iterator(chunk_size=50):
        problems += version_problems(version, recorded)
    chain, head = audit_chain_problems()
    return Report(problems + chain, ledgers.count(), versions.count(), AuditEntry.objects.count(), head)
