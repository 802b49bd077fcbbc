"""Maintainers' pages across packets: projects (bulk packets, round-robin assignment),
a packet's assignment, the dashboard and the audit view across packets.

Each POST calls one ``annotator.actions.projects`` function; reads come from
``annotator.reads.overview``, which lists only packets whose role for the viewer is
``maintainer``. Everyone else gets 404 on every page here.
"""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from annotator.actions import people as people_actions
from annotator.actions import projects as project_actions
from annotator.base.errors import InvalidInput, WorkflowError
from annotator.base.families import browser_schema
from annotator.base.urlconverters import parse_id
from annotator.entry.pages.site import _or_404
from annotator.models import Ledger, Project, TaskKind, Video
from annotator.reads import access, overview
from annotator.reads.windows import window_of


def _active_people():
    return get_user_model().objects.filter(is_active=True).order_by("username")


def _form_parameters(form: dict) -> dict:
    """The parameters typed into the form's own fields (the two players, the moment grid's
    step); the task kind's adapter checks them as it checks JSON ones."""
    parameters = {}
    players = [form["player_1"].strip(), form["player_2"].strip()]
    if any(players):
        parameters["players"] = players
    if form["grid_step"].strip():
        try:
            parameters["grid"] = {"step": float(form["grid_step"])}
        except ValueError:
            raise InvalidInput("the grid step is a number of seconds", field="grid_step") from None
    return parameters


@login_required
@require_http_methods(["GET", "POST"])
def project_list(request):
    """Every project; POST: create one (task kind, parameters, pools)."""
    _or_404(access.require_maintainer, request)
    context = {
        "projects": window_of(
            Project.objects.select_related("task_kind").order_by("title", "pk"), parse_id(request.GET.get("page"))
        ),
        # Each kind with the packet parameters it asks for (the page shows their fields).
        "task_kinds": [(kind, browser_schema(kind.schema)["ui"]["asks"]) for kind in TaskKind.objects.order_by("name")],
        "people": [(u, people_actions.roles_of(u)) for u in _active_people().prefetch_related("groups")],
        "form": {"parameters": "{}"},
    }
    if request.method == "POST":
        keys = ("title", "task_kind", "parameters", "instructions", "player_1", "player_2", "grid_step")
        form = {k: request.POST.get(k, "") for k in keys}
        context["form"] = {**form, "annotators": request.POST.getlist("annotators"),
                           "adjudicators": request.POST.getlist("adjudicators")}  # fmt: skip
        try:
            kind = TaskKind.objects.filter(slug=form["task_kind"]).first()
            if kind is None:
                raise InvalidInput("choose a task kind", field="task_kind")
            try:
                parameters = json.loads(form["parameters"] or "{}")
            except json.JSONDecodeError as error:
                raise InvalidInput(f"parameters are not JSON: {error.msg}", field="parameters") from None
            parameters = {**parameters, **_form_parameters(form)}
            people = _active_people()
            project = project_actions.check_create_project(
                actor=request.user,
                title=form["title"],
                task_kind=kind,
                parameters=parameters,
                instructions=form["instructions"],
                annotators=list(people.filter(pk__in=_ids(request.POST.getlist("annotators")))),
                adjudicators=list(people.filter(pk__in=_ids(request.POST.getlist("adjudicators")))),
            )
        except WorkflowError as error:
            context["error"] = error.message
            return render(request, "frontend/projects/list.html", context, status=error.status)
        return redirect("project", project.pk)
    return render(request, "frontend/projects/list.html", context)


def _ids(values) -> list[int]:
    return [i for i in (parse_id(v) for v in values) if i is not None]


@login_required
@require_http_methods(["GET", "POST"])
def project_detail(request, project_id: int):
    """A project's settings and packets; POST: one packet per chosen ready video."""
    project = _or_404(access.access_project, request, project_id)
    context = {
        "project": project,
        "parameters_json": json.dumps(project.parameters, ensure_ascii=False),
        "annotators": project.annotators.order_by("username"),
        "adjudicators": project.adjudicators.order_by("username"),
        "videos": Video.objects.filter(status=Video.Status.READY).order_by("title"),
    }
    if request.method == "POST":
        chosen = _ids(request.POST.getlist("videos"))
        videos = {v.pk: v for v in Video.objects.filter(pk__in=chosen)}
        try:
            made = project_actions.check_create_project_packets(
                actor=request.user, project=project, videos=[videos[i] for i in chosen if i in videos]
            )
            context["made"] = made
        except WorkflowError as error:
            context["error"] = error.message
    context["rows"] = overview.dashboard_rows(request.user, project_id=project.pk)
    return render(request, "frontend/projects/detail.html", context, status=400 if context.get("error") else 200)


@login_required
@require_http_methods(["GET", "POST"])
def packet_assignment(request, packet_id: int):
    """Who is on the packet; POST: replace an annotator whose ledger is still empty."""
    packet = _or_404(access.access_packet_assignment, request, packet_id).packet
    context = {"packet": packet, "people": _active_people()}
    if request.method == "POST":
        person = _active_people().filter(pk=parse_id(request.POST.get("person"))).first()
        try:
            project_actions.check_reassign_annotator(
                actor=request.user, packet=packet, side=request.POST.get("side", ""), person=person
            )
            context["notice"] = f"Annotator {request.POST.get('side', '').upper()} is now {person.username}."
        except WorkflowError as error:
            context["error"] = error.message
        packet.refresh_from_db()
    ledgers = Ledger.objects.filter(packet=packet).select_related("annotator")
    context["sides"] = [
        {"side": ledger.side, "person": ledger.annotator, "refusal": project_actions.reassignment_refusal(ledger)}
        for ledger in ledgers
    ]
    return render(request, "frontend/projects/assignment.html", context, status=400 if context.get("error") else 200)


@login_required
def dashboard(request):
    """Every packet the viewer maintains: state, per-side event counts, agreement."""
    _or_404(access.require_maintainer, request)
    filters = {
        "project_id": parse_id(request.GET.get("project")),
        "state": request.GET.get("state") if request.GET.get("state") in overview.STATES else None,
        "person_id": parse_id(request.GET.get("person")),
    }
    board = overview.dashboard(request.user, **filters, page=parse_id(request.GET.get("page")) or 1)
    query = {k: v for k, v in request.GET.items() if k != "page"}
    context = {
        "board": board,
        "rows": board.rows,
        "counts": board.counts,
        "query": urlencode(query),
        "filters": filters,
        "states": overview.STATES,
        "projects": Project.objects.order_by("title"),
        "people": get_user_model().objects.order_by("username"),
    }
    return render(request, "frontend/dashboard.html", context)


def _moment(value: str | None):
    """A ``datetime-local`` field's value as an aware time (the site's time zone)."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


@login_required
def audit_view(request):
    """The audit log across the packets the viewer maintains, filtered, with the
    attestation text of every freeze."""
    _or_404(access.require_maintainer, request)
    filters = {
        "person_id": parse_id(request.GET.get("person")),
        "operation": request.GET.get("operation") or None,
        "packet_id": parse_id(request.GET.get("packet")),
        "since": _moment(request.GET.get("since")),
        "until": _moment(request.GET.get("until")),
    }
    page = parse_id(request.GET.get("page")) or 1
    window = overview.AUDIT_WINDOW
    entries = list(overview.audit_entries(request.user, **filters, limit=window + 1, offset=(page - 1) * window))
    older = len(entries) > window
    entries = entries[:window]
    attestations = overview.attestations(entries)
    query = urlencode({k: v for k, v in request.GET.items() if k != "page"})
    context = {
        "page": page,
        "older": f"?{query}&page={page + 1}" if query and older else f"?page={page + 1}" if older else None,
        "newer": (f"?{query}&page={page - 1}" if query else f"?page={page - 1}") if page > 1 else None,
        "window": window,
        "entries": [
            {"entry": e, "attestation": attestations.get(e.pk), "details": overview.shown_details(e)} for e in entries
        ],
        "filters": filters,
        "raw": {k: request.GET.get(k, "") for k in ("since", "until")},
        "operations": overview.audit_operations(request.user),
        "people": get_user_model().objects.order_by("username").only("pk", "username"),
        "packets": access.maintained_packets(request.user).select_related(None).order_by("title").only("pk", "title"),
        "signing_key": overview.signing_key(),
    }
    return render(request, "frontend/audit.html", context)
