"""Projects: packets of one task kind made in bulk with round-robin blind assignment,
and reassignment of an annotator whose ledger is still empty.

Round robin: the project's annotator pool ``P`` (n ≥ 2 people) and adjudicator pool
``J`` (≥ 1) are taken in a fixed order (by user id). Packet ``k`` of the project
(``k`` counts on across batches: ``Project.next_slot``) gets annotator A =
``P[k mod n]``, annotator B = ``P[(k+1) mod n]`` and the first adjudicator of ``J``
at or after position ``k`` who is neither. So every annotator is A as often as B,
pairs rotate, and A, B and the adjudicator are three different people on every
packet (a packet without such a triple is refused before anything is written).
"""

from __future__ import annotations

from django.db import transaction

from annotator.actions.packets import do_create_packet
from annotator.base.errors import Conflict, InvalidInput
from annotator.base.families import adapter_for
from annotator.models import Ledger, LedgerEvent, Packet, Project, TaskKind, Video
from annotator.models.audit_log import record

MAX_TITLE_CHARS = 300  # the column's length (``Project.title``)


def validate_project_parameters_for(task_kind: TaskKind, parameters) -> dict:
    if not isinstance(parameters, dict):
        raise InvalidInput("parameters must be a JSON object", field="parameters")
    try:
        return adapter_for(task_kind.schema["family"]).check_project_parameters(parameters)
    except ValueError as error:
        raise InvalidInput(f"parameters: {error}", field="parameters") from None


def _check_pools(annotators, adjudicators) -> None:
    if len({p.pk for p in annotators}) < 2:
        raise InvalidInput("a project needs at least two annotators", field="annotators")
    if not adjudicators:
        raise InvalidInput("a project needs at least one adjudicator", field="adjudicators")
    inactive = sorted(p.username for p in [*annotators, *adjudicators] if not p.is_active)
    if inactive:
        raise InvalidInput(f"deactivated account(s): {', '.join(inactive)}", field="annotators")
    if len({p.pk for p in [*annotators, *adjudicators]}) < 3:
        raise InvalidInput("A, B and the adjudicator must be three different people", field="adjudicators")


@transaction.atomic
def do_create_project(
    *, actor, title: str, task_kind: TaskKind, annotators, adjudicators, parameters=None, instructions: str = ""
) -> Project:
    title = title.strip()
    if not title:
        raise InvalidInput("title is required", field="title")
    if Project.objects.filter(title=title).exists():
        raise Conflict(f"a project called {title!r} exists already", field="title")
    parameters = validate_project_parameters_for(task_kind, parameters or {})
    _check_pools(list(annotators), list(adjudicators))
    project = Project.objects.create(
        title=title, task_kind=task_kind, parameters=parameters, instructions=instructions, created_by=actor
    )
    project.annotators.set(annotators)
    project.adjudicators.set(adjudicators)
    record(
        actor,
        "create_project",
        project,
        details={
            "title": title,
            "task_kind": task_kind.slug,
            "parameters": parameters,
            "annotators": sorted(p.username for p in annotators),
            "adjudicators": sorted(p.username for p in adjudicators),
        },
    )
    return project


def round_robin(annotators: list, adjudicators: list, start: int, count: int) -> list[tuple]:
    """``count`` triples (A, B, adjudicator) from slot ``start`` on (module docstring)."""
    n, m = len(annotators), len(adjudicators)
    triples = []
    for k in range(start, start + count):
        a, b = annotators[k % n], annotators[(k + 1) % n]
        judge = next((adjudicators[(k + i) % m] for i in range(m) if adjudicators[(k + i) % m] not in (a, b)), None)
        if judge is None:
            raise InvalidInput(f"no adjudicator other than {a.username} and {b.username}", field="adjudicators")
        triples.append((a, b, judge))
    return triples


@transaction.atomic
def do_create_project_packets(*, actor, project: Project, videos: list[Video]) -> list[Packet]:
    """One packet per video (titled ``<project> · <video>``), assigned by round robin.
    All or nothing: a video that is not ready refuses the whole batch."""
    if not videos:
        raise InvalidInput("choose at least one video", field="videos")
    if len({v.pk for v in videos}) != len(videos):
        raise InvalidInput("a video is listed twice", field="videos")
    not_ready = [f"{v.title} ({v.status})" for v in videos if v.status != Video.Status.READY]
    if not_ready:
        raise InvalidInput(f"not ready: {', '.join(not_ready)}", field="videos")
    project = Project.objects.select_for_update().get(pk=project.pk)
    annotators = list(project.annotators.filter(is_active=True).order_by("pk"))
    adjudicators = list(project.adjudicators.filter(is_active=True).order_by("pk"))
    _check_pools(annotators, adjudicators)
    triples = round_robin(annotators, adjudicators, project.next_slot, len(videos))
    packets = []
    for video, (a, b, judge) in zip(videos, triples, strict=True):
        packet = do_create_packet(
            actor=actor,
            title=f"{project.title} · {video.title}",
            video=video,
            task_kind=project.task_kind,
            annotator_a=a,
            annotator_b=b,
            adjudicator=judge,
            instructions=project.instructions,
            parameters=project.parameters,
        )
        Packet.objects.filter(pk=packet.pk).update(project=project)
        packet.project = project
        packets.append(packet)
    project.next_slot += len(videos)
    project.save(update_fields=["next_slot"])
    record(actor, "create_project_packets", project, details={"packets": [p.pk for p in packets]})
    return packets


def reassignment_refusal(ledger: Ledger) -> str | None:
    """Why this ledger's annotator cannot be replaced, or ``None`` (docs/workflow.md)."""
    if ledger.is_frozen:
        return "the ledger is frozen"
    if LedgerEvent.objects.filter(ledger=ledger).exists():
        return "the ledger has events (only an annotator who has not started can be replaced)"
    return None


@transaction.atomic
def do_reassign_annotator(*, actor, packet: Packet, side: str, person) -> Ledger:
    """Give side ``side`` of ``packet`` to ``person`` while that ledger is empty and not
    frozen. The packet row is locked first, then the ledger, as every packet write does."""
    side = str(side).upper()
    if side not in {"A", "B"}:
        raise InvalidInput("side is A or B", field="side")
    packet = Packet.objects.select_for_update().get(pk=packet.pk)
    ledger = Ledger.objects.select_for_update().get(packet=packet, side=side)
    refusal = reassignment_refusal(ledger)
    if refusal:
        raise Conflict(f"annotator {side} cannot be replaced: {refusal}", field="side")
    if not person.is_active:
        raise InvalidInput(f"{person.username} is deactivated", field="person")
    other = packet.annotator_b_id if side == "A" else packet.annotator_a_id
    if person.pk in {other, packet.adjudicator_id}:
        raise InvalidInput(f"{person.username} already holds another role on this packet", field="person")
    before = ledger.annotator
    if before.pk == person.pk:
        return ledger
    Packet.objects.filter(pk=packet.pk).update(**{f"annotator_{side.lower()}": person})
    Ledger.objects.filter(pk=ledger.pk).update(annotator=person)
    ledger.refresh_from_db()
    record(
        actor,
        "reassign_annotator",
        packet,
        packet=packet,
        details={"side": side, "from": before.username, "to": person.username},
    )
    return ledger


def check_create_project(
    *, actor, title, task_kind: TaskKind, annotators, adjudicators, parameters=None, instructions=""
) -> Project:
    """The new-project form: a title of 1 to ``MAX_TITLE_CHARS`` characters, the kind's
    project parameters, two annotators and an adjudicator; then ``do_create_project``."""
    if not isinstance(title, str) or not title.strip():
        raise InvalidInput("title is required", field="title")
    if len(title.strip()) > MAX_TITLE_CHARS:
        raise InvalidInput(f"a title is at most {MAX_TITLE_CHARS} characters", field="title")
    if not isinstance(instructions, str):
        raise InvalidInput("instructions must be text", field="instructions")
    parameters = validate_project_parameters_for(task_kind, parameters or {})
    _check_pools(list(annotators), list(adjudicators))
    return do_create_project(
        actor=actor, title=title, task_kind=task_kind, annotators=annotators, adjudicators=adjudicators,
        parameters=parameters, instructions=instructions,
    )  # fmt: skip


def check_create_project_packets(*, actor, project: Project, videos: list[Video]) -> list[Packet]:
    """The chosen videos: at least one, none twice; then ``do_create_project_packets``
    (which refuses a video that is not ready, under the project's lock)."""
    if not videos:
        raise InvalidInput("choose at least one video", field="videos")
    if len({v.pk for v in videos}) != len(videos):
        raise InvalidInput("a video is listed twice", field="videos")
    return do_create_project_packets(actor=actor, project=project, videos=videos)


def check_reassign_annotator(*, actor, packet: Packet, side, person) -> Ledger:
    """The reassignment form: side A or B and an active person; then ``do_reassign_annotator``."""
    if not isinstance(side, str) or side.upper() not in {"A", "B"}:
        raise InvalidInput("side is A or B", field="side")
    if person is None or not person.is_active:
        raise InvalidInput("choose an active person", field="person")
    return do_reassign_annotator(actor=actor, packet=packet, side=side, person=person)
