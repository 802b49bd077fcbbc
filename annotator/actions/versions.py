"""Publishing ground-truth versions: adjudicated from a union, provisional from imports."""

from __future__ import annotations

import json

from django.db import transaction
from django.db.models import Max

from annotator.actions.audit import record
from annotator.actions.grading import compute_calibration_on_publish, store_agreement_report
from annotator.canonical import canonical_sha256
from annotator.documents import version_document, version_events
from annotator.errors import Conflict, InvalidInput
from annotator.models import Decision, GroundTruthVersion, Packet, Union, UnionItem
from annotator.taskkinds import EventInvalid, validate_event


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


def _next_number(packet: Packet, tier: str) -> int:
    current = GroundTruthVersion.objects.filter(packet=packet, tier=tier).aggregate(m=Max("number"))["m"]
    return (current or 0) + 1


def _previous(packet: Packet, tier: str) -> GroundTruthVersion | None:
    """The version a changelog compares against: the latest of the *same* tier only.

    Never across tiers: an adjudicated version is seen by annotators, and a changelog
    against the provisional tier would show them third-party labels.
    """
    return GroundTruthVersion.objects.filter(packet=packet, tier=tier).order_by("-number").first()


def adjudication_log(union: Union) -> list[dict]:
    log = []
    for item in union.items.select_related("decision").order_by("position"):
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


def _unchanged(previous: GroundTruthVersion | None, digest: str, manifest: dict) -> bool:
    """True when the latest version of the tier already holds exactly this (same
    ground truth, same manifest apart from its number): publishing again is a no-op."""
    if previous is None or previous.sha256 != digest:
        return False
    same = {k: v for k, v in previous.manifest.items() if k != "version"}
    return same == {k: v for k, v in manifest.items() if k != "version"}


def _create_version(packet, *, actor, tier, events, manifest_extra, source) -> GroundTruthVersion:
    """The next version of ``tier``, or the latest one when nothing changed.

    The returned version's ``created`` attribute says which (the API answers 201 or 200).
    """
    schema = packet.task_kind.schema
    document = version_document(packet, events)
    text, digest = canonical_sha256(document)
    previous = _previous(packet, tier)
    number = _next_number(packet, tier)
    _, schema_sha = canonical_sha256(schema)
    manifest = json.loads(
        json.dumps(
            {
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
        )
    )
    if _unchanged(previous, digest, manifest):
        version_events(previous)  # never hand back a tampered version as "unchanged"
        previous.created = False
        return previous
    _, manifest_sha = canonical_sha256(manifest)
    version = GroundTruthVersion.objects.create(
        packet=packet,
        tier=tier,
        number=number,
        canonical_json=text,
        sha256=digest,
        manifest=manifest,
        manifest_sha256=manifest_sha,
        changelog=changelog(schema, previous, document["events"]),
        source=source,
        created_by=actor,
    )
    record(
        actor,
        f"publish_{tier}_version",
        version,
        packet=packet,
        hashes={"version": digest, "manifest": manifest_sha},
        details={"number": number},
    )
    compute_calibration_on_publish(version)
    version.created = True
    return version


@transaction.atomic
def do_publish_adjudicated_version(packet: Packet, *, actor) -> GroundTruthVersion:
    """Freeze the adjudicated ledger as the next adjudicated version.

    Refused until every non-agreed union item has a decision. Idempotent: when the
    latest adjudicated version already holds the same ground truth and manifest (nothing
    was decided differently since), that version is returned (``created`` False).
    Precondition: caller holds ``select_for_update`` on the packet.
    """
    union = Union.objects.filter(packet=packet).first()
    if union is None:
        raise Conflict("there is no union to publish yet")
    undecided = union.items.exclude(status=UnionItem.Status.AGREED).filter(decision__isnull=True).count()
    if undecided:
        raise Conflict(f"{undecided} union item(s) still need a decision")
    log = adjudication_log(union)
    events = [entry["final_value"] for entry in log if entry["final_value"] is not None]
    unresolved = [entry for entry in log if entry["action"] == Decision.Action.UNKNOWN]
    _, log_sha = canonical_sha256(log)
    version = _create_version(
        packet,
        actor=actor,
        tier=GroundTruthVersion.Tier.ADJUDICATED,
        events=events,
        source="adjudication",
        manifest_extra={
            "ledger_a_sha256": union.ledger_a_sha256,
            "ledger_b_sha256": union.ledger_b_sha256,
            "adjudication_log_sha256": log_sha,
            "adjudication_log": log,
            "unresolved": unresolved,
        },
    )
    store_agreement_report(packet)  # against the new version, so that reading it never writes
    return version


@transaction.atomic
def do_import_provisional_version(
    packet: Packet, events: list, *, actor, source: str, source_sha256: str
) -> GroundTruthVersion:
    """Store third-party labels (published annotations) as the next provisional version.

    Every event is validated against the task kind; annotators never see this tier.
    Importing the same events from the same source again returns the latest version.
    """
    schema = packet.task_kind.schema
    cleaned = []
    for position, event in enumerate(events):
        try:
            cleaned.append(
                validate_event(schema, event, frame_count=packet.video.frame_count, duration=packet.video.duration)
            )
        except EventInvalid as exc:
            raise InvalidInput(f"event {position + 1}: {exc}", field=exc.field) from None
    return _create_version(
        packet,
        actor=actor,
        tier=GroundTruthVersion.Tier.PROVISIONAL,
        events=cleaned,
        source=source,
        manifest_extra={"source": source, "source_sha256": source_sha256},
    )
