"""What publishing would produce, read without writing: the next version of a tier, its
manifest, its changelog against the previous version of the same tier, and whether it
would change anything at all.

``annotator.actions.versions`` writes exactly what :func:`pending_version` computes, so
the confirmation a person sees before publishing (``GET /api/packets/<id>/publish/``)
and the version the publish call stores cannot disagree. Reads rows, writes nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from annotator.base.canonical import canonical_sha256
from annotator.base.errors import Conflict
from annotator.models import Decision, GroundTruthVersion, Packet, Union, UnionItem
from annotator.reads.documents import version_document, version_events
from annotator.reads.sealed_rows import verify_decisions, verify_union

# The decision counts a confirmation shows, in this order ("agreed": no decision needed).
DECISION_KINDS = ["agreed", *Decision.Action.values]


def version_label(tier: str, number: int) -> str:
    """How a version is named everywhere: "adjudicated v2", "provisional v1" (numbers
    count per tier, so a bare "v1" would be ambiguous)."""
    return f"{tier} v{number}"


PUBLIC_ANSWERS = (
    "imported from a published release: its answers are public, executable bundles can embed them "
    "(a bundle carrying the release's annotations scores 1.0); grade bundles against an adjudicated version"
)


def answers_public(version: GroundTruthVersion) -> dict:
    """Whether a version's answers are public, derived from where it came from (its tier): a
    provisional version is third-party labels imported from a file (a published release such as
    QVHighlights, Charades-STA, GTEA, a benchmark's oracle), whose answers anyone may hold, and
    the house cannot tell a released file from a private one, so every imported version is
    marked; an adjudicated version is made here from blind ledgers and never leaves the house.
    ``docs/grading.md`` ("Public answer keys") says which versions bundles may be graded against."""
    public = version.tier == GroundTruthVersion.Tier.PROVISIONAL
    return {"public": public, "why": PUBLIC_ANSWERS if public else "", "source": version.source}


def changelog(schema: dict, previous: GroundTruthVersion | None, events: list[dict]) -> dict:
    """Added / removed / changed events against the previous version.

    With identity fields, events sharing an identity are reported as changed (with
    the fields that differ); without, an event is either kept, added or removed.
    """
    if previous is None:
        return {"previous": None, "added": len(events), "removed": 0, "changed": [], "kept": 0}
    old = version_events(previous)
    identity = schema.get("identity_fields") or []

    def key(e):
        return json.dumps(e, sort_keys=True)

    old_keys, new_keys = {key(e) for e in old}, {key(e) for e in events}
    added = [e for e in events if key(e) not in old_keys]
    removed = [e for e in old if key(e) not in new_keys]
    changed = []
    if identity:
        by_identity = {tuple(json.dumps(e.get(f)) for f in identity): e for e in removed}
        for event in list(added):
            match = by_identity.pop(tuple(json.dumps(event.get(f)) for f in identity), None)
            if match is not None:
                fields = sorted(f for f in set(event) | set(match) if event.get(f) != match.get(f))
                changed.append({"identity": {f: event.get(f) for f in identity}, "fields": fields})
                added.remove(event)
                removed.remove(match)
    return {
        "previous": {"id": previous.pk, "tier": previous.tier, "number": previous.number, "sha256": previous.sha256},
        "added": len(added),
        "removed": len(removed),
        "changed": changed,
        "kept": len(new_keys & old_keys),
        "added_events": added,
        "removed_events": removed,
    }


def latest_version(packet: Packet, tier: str) -> GroundTruthVersion | None:
    """The version a changelog compares against: the latest of the *same* tier only.

    Never across tiers: an adjudicated version is seen by annotators, and a changelog
    against the provisional tier would show them third-party labels.
    """
    return GroundTruthVersion.objects.filter(packet=packet, tier=tier).order_by("-number").first()


def adjudication_log(union: Union) -> list[dict]:
    """Every union item with its decision and rationale, in union order (exported with
    each adjudicated version as ``adjudication_log.json``)."""
    log = []
    items = list(union.items.select_related("decision").order_by("position"))
    # A union item or a decision changed by SQL is never published (nor previewed): read
    # through their seals (an agreed item's value is published as it stands).
    verify_union(union, items)
    verify_decisions(item.decision for item in items if hasattr(item, "decision"))
    for item in items:
        decision = getattr(item, "decision", None)
        log.append(
            {
                "position": item.position,
                "status": item.status,
                "a_value": item.a_value,
                "b_value": item.b_value,
                "action": decision.action if decision else "agreed",
                "final_value": decision.final_value if decision else item.a_value,
                "rationale": decision.rationale if decision else "",
            }
        )
    return log


@dataclass
class PendingVersion:
    """The version a publish call would store now, or ``unchanged`` with the latest one."""

    tier: str
    number: int
    events: list[dict]
    canonical_json: str
    sha256: str
    manifest: dict
    previous: GroundTruthVersion | None

    @property
    def unchanged(self) -> bool:
        """True when the latest version of the tier already holds exactly this (same
        ground truth, same manifest apart from its number): publishing is a no-op."""
        previous = self.previous
        if previous is None or previous.sha256 != self.sha256:
            return False
        same = {k: v for k, v in previous.manifest.items() if k != "version"}
        return same == {k: v for k, v in self.manifest.items() if k != "version"}

    def changelog(self, schema: dict) -> dict:
        return changelog(schema, self.previous, version_document_events(self))


def version_document_events(pending: PendingVersion) -> list[dict]:
    return json.loads(pending.canonical_json)["events"]


def pending_version(packet: Packet, *, tier: str, events: list[dict], manifest_extra: dict) -> PendingVersion:
    document = version_document(packet, events)
    text, digest = canonical_sha256(document)
    previous = latest_version(packet, tier)
    number = (previous.number if previous else 0) + 1
    _, schema_sha = canonical_sha256(packet.task_kind.schema)
    manifest = {
        "packet": packet.pk,
        "packet_sha256": packet.sha256,
        "tier": tier,
        "version": number,
        "task_kind": packet.task_kind.slug,
        "schema_sha256": schema_sha,
        "scorer_id": packet.task_kind.scorer_id,
        "events": len(events),
        "ground_truth_sha256": digest,
        **manifest_extra,
    }
    manifest = json.loads(json.dumps(manifest))  # the form it has once stored as JSON
    return PendingVersion(tier, number, events, text, digest, manifest, previous)


def pending_adjudicated_version(packet: Packet) -> tuple[PendingVersion, list[dict], int]:
    """The adjudicated version publishing would store now, the adjudication log it
    carries, and how many union items still need a decision (publishing is refused
    while any do). ``Conflict`` when there is no union yet."""
    union = Union.objects.filter(packet=packet).first()
    if union is None:
        raise Conflict("there is no union to publish yet")
    undecided = union.items.exclude(status=UnionItem.Status.AGREED).filter(decision__isnull=True).count()
    log = adjudication_log(union)
    events = [entry["final_value"] for entry in log if entry["final_value"] is not None]
    unresolved = [entry for entry in log if entry["action"] == Decision.Action.UNKNOWN]
    _, log_sha = canonical_sha256(log)
    pending = pending_version(
        packet,
        tier=GroundTruthVersion.Tier.ADJUDICATED,
        events=events,
        manifest_extra={
            "ledger_a_sha256": union.ledger_a_sha256,
            "ledger_b_sha256": union.ledger_b_sha256,
            "adjudication_log_sha256": log_sha,
            "adjudication_log": log,
            "unresolved": unresolved,
        },
    )
    return pending, log, undecided


def publication_preview(packet: Packet) -> dict:
    """What publishing the adjudicated tier now would do, for the confirmation step:
    item counts by decision, the changelog against the latest adjudicated version, the
    label the new version gets, or that nothing changed (publishing returns the latest).
    """
    pending, log, undecided = pending_adjudicated_version(packet)
    counts = Counter(entry["action"] for entry in log)
    previous = pending.previous
    unchanged = pending.unchanged
    change = pending.changelog(packet.task_kind.schema)
    return {
        "publishable": undecided == 0,
        "undecided": undecided,
        "items": len(log),
        "decisions": {kind: counts.get(kind, 0) for kind in DECISION_KINDS},
        "events": len(pending.events),
        "unresolved": counts.get(Decision.Action.UNKNOWN, 0),
        "unchanged": unchanged,
        "label": version_label(pending.tier, previous.number if unchanged else pending.number),
        "previous": None
        if previous is None
        else {
            "id": previous.pk,
            "number": previous.number,
            "label": version_label(previous.tier, previous.number),
            "sha256": previous.sha256,
        },
        # Decisions differ from the latest published version (nothing published: False).
        "unpublished_changes": previous is not None and not unchanged,
        "changelog": change,
    }
