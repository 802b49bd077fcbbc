from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotator.actions.search import request_search_index
from annotator.base.canonical import canonical_sha256
from annotator.base.errors import InvalidInput
from annotator.base.families import adapter_for
from annotator.base.families.base import ParametersInvalid
from annotator.models import Ledger, Packet, TaskKind, Video
from annotator.models.audit_log import record
from annotator.reads.access import assignment_refusal


def packet_content(*, title, video: Video, task_kind: TaskKind, instructions: str, parameters: dict) -> dict:
    """What a packet's hash covers: everything an annotator is given. (The parameters are
    hashed under the key ``params``, their name when the first packets were hashed.)"""
    _, schema_sha = canonical_sha256(task_kind.schema)
    return {
        "title": title,
        "video_sha256": video.sha256,
        "frame_count": video.frame_count,
        "frame_rate": [video.frame_rate_num, video.frame_rate_den],
        "task_kind": task_kind.slug,
        "schema_sha256": schema_sha,
        "scorer_id": task_kind.scorer_id,
        "instructions": instructions,
        "params": parameters,
    }


def validate_packet_parameters(task_kind: TaskKind, parameters) -> dict:
    if not isinstance(parameters, dict):
        raise InvalidInput("parameters must be a JSON object", field="parameters")
    try:
        return adapter_for(task_kind.schema["family"]).check_parameters(parameters)
    except ParametersInvalid as exc:
        raise InvalidInput(f"parameters.{exc.field}: {exc}", field=f"parameters.{exc.field}") from None


def validate_assignment(annotator_a, annotator_b, adjudicator) -> None:
    refusal = assignment_refusal(annotator_a, annotator_b, adjudicator)
    if refusal is not None:
        raise InvalidInput(refusal, field="assignment")


@transaction.atomic
def do_create_packet(
    *,
    actor,
    title: str,
    video: Video,
    task_kind: TaskKind,
    annotator_a,
    annotator_b,
    adjudicator,
    instructions: str = "",
    parameters: dict | None = None,
) -> Packet:
    """Create a packet with two blank ledgers; hash its canonical content. ``parameters``
    are checked against the task kind's family (``InvalidInput`` naming the field)."""
    validate_assignment(annotator_a, annotator_b, adjudicator)
    if video.status != Video.Status.READY:
        raise InvalidInput(f"video {video.pk} is not ready (status {video.status})", field="video")
    if not title.strip():
        raise InvalidInput("title is required", field="title")
    parameters = validate_packet_parameters(task_kind, parameters or {})
    _, digest = canonical_sha256(
        packet_content(title=title, video=video, task_kind=task_kind, instructions=instructions, parameters=parameters)
    )
    packet = Packet.objects.create(
        title=title,
        video=video,
        task_kind=task_kind,
        instructions=instructions,
        parameters=parameters,
        annotator_a=annotator_a,
        annotator_b=annotator_b,
        adjudicator=adjudicator,
        sha256=digest,
        created_by=actor,
    )
    Ledger.objects.create(packet=packet, side=Ledger.Side.A, annotator=annotator_a)
    Ledger.objects.create(packet=packet, side=Ledger.Side.B, annotator=annotator_b)
    record(actor, "create_packet", packet, packet=packet, hashes={"packet": digest})
    request_search_index(video)  # a moment packet: its video's search index, after commit
    return packet


def user_by_username(username: str):
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise InvalidInput(f"no user {username!r}", field="assignment") from None
