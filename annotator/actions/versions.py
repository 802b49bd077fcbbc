"""Publishing ground-truth versions: adjudicated from a union, provisional from imports.

What a publication would store is computed by ``annotator.reads.publishing`` (the same
function answers the confirmation preview); this module only stores it. The calibration
anchors of a new version and the agreement report against it are derived work, computed by
tasks after the publication commits (``annotator.actions.derived``)."""

from __future__ import annotations

from django.db import transaction

from annotator.actions.derived import queue_agreement_report, queue_version_calibration
from annotator.base.canonical import canonical_sha256
from annotator.base.errors import Conflict, InvalidInput
from annotator.base.families import adapter_for
from annotator.base.seals import row_seal
from annotator.models import GroundTruthVersion, Packet
from annotator.models.audit_log import record
from annotator.models.taskkind_schema import EventInvalid, packet_schema, validate_event
from annotator.reads.anchors import anchor_on_commit
from annotator.reads.documents import version_events
from annotator.reads.label_imports import preview_label_file
from annotator.reads.publishing import PendingVersion, pending_adjudicated_version, pending_version


def _store_version(packet, pending: PendingVersion, *, actor, source) -> GroundTruthVersion:
    """Store ``pending`` as the next version of its tier, or hand back the latest one
    when nothing changed. The returned version's ``created`` attribute says which (the
    API answers 201 or 200)."""
    if pending.unchanged:
        previous = pending.previous
        version_events(previous)  # never hand back a tampered version as "unchanged"
        previous.created = False
        return previous
    _, manifest_sha = canonical_sha256(pending.manifest)
    version = GroundTruthVersion.objects.create(
        packet=packet,
        tier=pending.tier,
        number=pending.number,
        canonical_json=pending.canonical_json,
        sha256=pending.sha256,
        manifest=pending.manifest,
        manifest_sha256=manifest_sha,
        changelog=pending.changelog(packet.task_kind.schema),
        source=source,
        created_by=actor,
    )
    record(
        actor,
        f"publish_{pending.tier}_version",
        version,
        packet=packet,
        hashes={"version": pending.sha256, "manifest": manifest_sha, "row": row_seal(version)},
        details={"number": pending.number},
    )
    queue_version_calibration(version, actor=actor)  # the anchors are computed after commit
    anchor_on_commit(f"publish version {version.pk}")
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
    pending, _, undecided = pending_adjudicated_version(packet)
    if undecided:
        raise Conflict(f"{undecided} union item(s) still need a decision")
    version = _store_version(packet, pending, actor=actor, source="adjudication")
    # Against the new version, so that reading it never writes; computed after commit.
    queue_agreement_report(packet, actor=actor, after="publication")
    return version


@transaction.atomic
def do_import_provisional_version(
    packet: Packet, events: list, *, actor, source: str, source_sha256: str
) -> GroundTruthVersion:
    """Store third-party labels (published annotations) as the next provisional version.

    Every event is validated against the task kind; annotators never see this tier.
    Importing the same events from the same source again returns the latest version.
    """
    schema = packet_schema(packet)
    cleaned = []
    for position, event in enumerate(events):
        try:
            cleaned.append(
                validate_event(schema, event, frame_count=packet.video.frame_count, duration=packet.video.duration)
            )
        except EventInvalid as exc:
            raise InvalidInput(f"event {position + 1}: {exc}", field=exc.field) from None
    pending = pending_version(
        packet,
        tier=GroundTruthVersion.Tier.PROVISIONAL,
        events=cleaned,
        manifest_extra={"source": source, "source_sha256": source_sha256},
    )
    return _store_version(packet, pending, actor=actor, source=source)


def check_import_provisional_version(
    packet: Packet, *, actor, file_name: str, data: bytes, player_one: str = "first"
) -> GroundTruthVersion:
    """Import a label file a user gave (the import page, ``manage.py import_gtea_labels``)
    as the packet's next provisional version, in the format its family names
    (``FamilyAdapter.label_format``).

    The file is read as its dry run reads it (``reads.label_imports``): at most
    ``MAX_LABEL_BYTES``, UTF-8, every line or row checked against the packet's task kind
    and video. Any refused line refuses the whole file (``InvalidInput`` naming the first
    one and how many there are); then ``do_import_provisional_version``."""
    label_format = adapter_for(packet.task_kind.schema["family"]).label_format
    if label_format is None:
        raise InvalidInput("packets of this task kind take no label file", field="file")
    preview = preview_label_file(packet, label_format, file_name, data, player_one=player_one)
    if preview.invalid:
        number, _, reason = preview.invalid[0]
        more = f" (and {len(preview.invalid) - 1} more refused)" if len(preview.invalid) > 1 else ""
        raise InvalidInput(f"{f'line {number}: ' if number else ''}{reason}{more}", field="file")
    return do_import_provisional_version(
        packet, preview.events, actor=actor, source=f"{label_format}:{file_name}", source_sha256=preview.sha256
    )
