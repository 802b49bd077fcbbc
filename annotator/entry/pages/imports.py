"""Label imports from the browser, each with a dry run first (counts, every refused
line or row with its reason); the import is a second POST that carries the same bytes,
checked again from scratch and matched against the previewed SHA-256.

- A label file into a packet's provisional tier, in the format its family names
  (``FamilyAdapter.label_format``): GTEA Gaze+ labels (actions), Match Charting Project
  point rows (break points, ``annotator.base.charting``). Maintainers of the packet.
- QVHighlights / Charades-STA rows as moment packets with provisional versions:
  maintainers (as ``POST /api/moment-imports/``, with its limit: 64 MiB a file). The
  files of a dry run that could import are kept on the server, and the import POST names
  them by SHA-256 (``staged``) rather than carrying them back: a form field is at most
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2 MiB). A label file (at most 1 MiB) travels back in
  the import form (``data_b64``).

Everyone else gets 404.
"""

from __future__ import annotations

import base64
import binascii

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotator.actions.moment_imports import check_import_moment_packets, check_stage_moment_files
from annotator.actions.people import roles_of
from annotator.actions.versions import check_import_provisional_version
from annotator.base.errors import WorkflowError
from annotator.base.families import adapter_for
from annotator.base.moment_sources import MAX_FILE_BYTES, SOURCES, SourceError, select
from annotator.entry.pages.site import _or_404
from annotator.models import Packet, VideoSearchIndex
from annotator.reads import access
from annotator.reads.label_imports import (
    MAX_LABEL_BYTES,
    charting_players,
    moment_import_refusals,
    preview_label_file,
    preview_moment_rows,
    staged_moment_file,
)
from annotator.reads.search import FEATURE_LAYOUTS, has_media


def _uploaded(request) -> tuple[str, bytes] | None:
    """The file of a preview POST, or the bytes a commit POST carries back."""
    upload = request.FILES.get("labels")
    if upload is not None:
        if upload.size > MAX_LABEL_BYTES + 1:
            return upload.name, upload.read(MAX_LABEL_BYTES + 1)
        return upload.name, upload.read()
    try:
        data = base64.b64decode(request.POST.get("data_b64", ""), validate=True)
    except (binascii.Error, ValueError):
        return None
    return (request.POST.get("name", "labels.txt")[:200], data) if data else None


# label format -> its page's template
LABEL_FORMATS = {"gtea": "frontend/imports/gtea.html", "mcp-charting": "frontend/imports/charting.html"}


def _label_options(request) -> dict:
    return {"player_one": "second" if request.POST.get("player_one") == "second" else "first"}


@login_required
@require_http_methods(["GET", "POST"])
def import_labels(request, packet_id: int):
    packet = _or_404(access.access_label_import, request, packet_id).packet
    label_format = adapter_for(packet.task_kind.schema["family"]).label_format
    options = _label_options(request)
    context = {"packet": packet, "options": options, "players": charting_players(packet)}
    if label_format not in LABEL_FORMATS:
        context["error"] = "Packets of this task kind take no label file."
        return render(request, "frontend/imports/gtea.html", context, status=400 if request.method == "POST" else 200)
    template = LABEL_FORMATS[label_format]
    if request.method == "GET":
        return render(request, template, context)
    uploaded = _uploaded(request)
    if uploaded is None:
        context["error"] = "Choose a label file."
        return render(request, template, context, status=400)
    name, data = uploaded
    preview = preview_label_file(packet, label_format, name, data, player_one=options["player_one"])
    context.update(preview=preview, data_b64=base64.b64encode(data).decode("ascii"))
    if request.POST.get("op") != "import":
        return render(request, template, context)
    if request.POST.get("sha256") != preview.sha256:
        context["error"] = "The file differs from the one previewed; preview it again."
        return render(request, template, context, status=409)
    if not preview.can_import:
        context["error"] = "Nothing was imported: fix the refused lines first."
        return render(request, template, context, status=400)
    try:
        version = check_import_provisional_version(
            packet, actor=request.user, file_name=name, data=data, player_one=options["player_one"]
        )
    except WorkflowError as error:
        context["error"] = error.message
        return render(request, template, context, status=error.status)
    context["version"] = version
    return render(request, template, context)


class NotStaged(Exception):
    """The import names previewed files the server no longer keeps."""


def _moment_files(request) -> tuple[str, bytes, list[bytes]] | None:
    """The annotation file and re-annotation CSVs: uploaded (preview), named by the
    SHA-256 under which the preview kept them (``staged``, the page's import form), or
    carried in the form (``data_b64``, ``extra_b64``: what fits a form field)."""
    upload = request.FILES.get("rows")
    if upload is not None:
        limit = MAX_FILE_BYTES + 1  # one byte past the limit: enough to refuse the file
        return upload.name, upload.read(limit), [f.read(limit) for f in request.FILES.getlist("reannotated")]
    name = request.POST.get("name", "rows.jsonl")[:200]
    if request.POST.get("staged"):
        files = [staged_moment_file(x) for x in [request.POST["staged"], *request.POST.getlist("staged_extra")]]
        if any(data is None for data in files):
            raise NotStaged
        return name, files[0], files[1:]
    try:
        data = base64.b64decode(request.POST.get("data_b64", ""), validate=True)
        extra = [base64.b64decode(x, validate=True) for x in request.POST.getlist("extra_b64")]
    except (binascii.Error, ValueError):
        return None
    return (name, data, extra) if data else None


ASSIGNMENT = ("annotator_a", "annotator_b", "adjudicator")


def default_assignment(people, actor=None) -> dict[str, str]:
    """Three different people for annotator A, B and the adjudicator: the first two
    annotators and the first adjudicator who is neither, by role, then anyone left;
    a place stays empty ("—") rather than repeat a person or name ``actor`` (the import
    refuses a maintainer on his own packet: ``access.may_import_labels``)."""
    people = [person for person in people if actor is None or person.pk != actor.pk]
    roles = {person.pk: roles_of(person) for person in people}
    chosen: list = []
    for wanted in ("annotator", "annotator", "adjudicator"):
        pick = next((p for p in people if wanted in roles[p.pk] and p not in chosen), None)
        chosen.append(pick)
    for place, pick in enumerate(chosen):
        if pick is None:
            chosen[place] = next((p for p in people if p not in chosen), None)
    return {key: str(pick.pk) if pick is not None else "" for key, pick in zip(ASSIGNMENT, chosen, strict=True)}


@login_required
@require_http_methods(["GET", "POST"])
def import_moments(request):
    """QVHighlights / Charades-STA rows: one moment packet per video with a provisional
    version (``check_import_moment_packets``, as ``POST /api/moment-imports/``). The form
    starts with three different people; the dry run refuses what the import would."""
    _or_404(access.require_maintainer, request)
    people = get_user_model().objects.filter(is_active=True).order_by("username")
    form = {k: request.POST.get(k, "") for k in ("source", *ASSIGNMENT, "limit")}
    context = {"sources": list(SOURCES), "people": people, "form": form}
    if request.method == "GET":
        form.update(default_assignment(people, request.user))
        return render(request, "frontend/imports/moments.html", context)
    try:
        files = _moment_files(request)
    except NotStaged:
        context["error"] = "The previewed file is no longer kept on the server; preview it again."
        return render(request, "frontend/imports/moments.html", context, status=409)
    if files is None:
        context["error"] = "Choose an annotation file (.jsonl)."
        return render(request, "frontend/imports/moments.html", context, status=400)
    name, data, extra = files
    chosen_people = tuple(people.filter(pk=_int(form[k])).first() for k in ASSIGNMENT)
    preview = preview_moment_rows(form["source"], name, data, reannotated=extra, people=chosen_people)
    chosen = preview.videos
    if form["limit"]:
        try:
            chosen = select(preview.videos, limit=int(form["limit"]))
        except (ValueError, SourceError):
            preview.invalid.append((0, "", "the number of videos must be a whole number, at least 1"))
    if preview.can_import:  # the import's own refusal of this maintainer, predicted
        preview.refusals += moment_import_refusals(request.user, form["source"], chosen, chosen_people)
    context.update(preview=preview, chosen=chosen)
    if request.POST.get("op") != "import":
        if preview.can_import:  # kept for the import POST, which names them
            staged = check_stage_moment_files([data, *extra])
            context.update(staged=staged[0], staged_extra=staged[1:])
        return render(request, "frontend/imports/moments.html", context)
    context.update(staged=request.POST.get("staged", ""), staged_extra=request.POST.getlist("staged_extra"))
    if request.POST.get("sha256") != preview.sha256:
        context["error"] = "The file differs from the one previewed; preview it again."
        return render(request, "frontend/imports/moments.html", context, status=409)
    if not preview.can_import:
        context["error"] = "Nothing was imported: " + (
            " ".join(preview.refusals) if preview.refusals else "fix the refused rows first."
        )
        return render(request, "frontend/imports/moments.html", context, status=400)
    try:
        context["report"] = check_import_moment_packets(
            actor=request.user, source=form["source"], file_name=name, data=data, reannotated=extra,
            annotator_a=chosen_people[0], annotator_b=chosen_people[1], adjudicator=chosen_people[2],
            limit_videos=form["limit"],
        )  # fmt: skip
    except WorkflowError as error:
        context["error"] = error.message
        return render(request, "frontend/imports/moments.html", context, status=error.status)
    _mark_annotation_only(context["report"])
    context["feature_layouts"] = FEATURE_LAYOUTS
    return render(request, "frontend/imports/moments.html", context)


def _mark_annotation_only(report: dict) -> None:
    """Each imported packet: ``annotation_only`` when its video has neither a file nor
    features yet (search and the zero-shot anchor wait for features)."""
    packets = Packet.objects.select_related("video").in_bulk([p["packet"] for p in report["packets"]])
    videos = {packet.video_id for packet in packets.values()}
    indexes = {row.video_id: row for row in VideoSearchIndex.objects.filter(video_id__in=videos)}
    for row in report["packets"]:
        packet = packets[row["packet"]]
        index = indexes.get(packet.video_id)
        row["annotation_only"] = not has_media(packet) and not (index is not None and index.features_upload)
    report["annotation_only"] = sum(row["annotation_only"] for row in report["packets"])


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
