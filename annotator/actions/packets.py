from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotator.actions.search import request_search_index
from annotator.base.canonical import canonical_sha256
from annotator.base.errors import InvalidInput
from annotator.base.families import adapter_for
from annotator.base.families.base import ParametersInvalid
from annotator.base.seals import packet_content
from annotator.models import Ledger, Packet, TaskKind, Video
from annotator.models.audit_log import record
from annotator.reads.access import assignment_refusal


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
