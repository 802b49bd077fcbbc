"""Label imports from the browser: a GTEA Gaze+ label file into a packet's provisional
tier, with a dry run first (counts, every refused line with its reason); the import
is a second POST that carries the same bytes, checked again from scratch and matched
against the previewed SHA-256. Maintainers of the packet only; 404 for everyone else.
"""

from __future__ import annotations

import base64
import binascii

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotator import access
from annotator.actions.versions import do_import_provisional_version
from annotator.errors import WorkflowError
from annotator.label_imports import MAX_LABEL_BYTES, preview_gtea_labels
from frontend.pages import _or_404


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


@login_required
@require_http_methods(["GET", "POST"])
def import_labels(request, packet_id: int):
    packet = _or_404(access.access_label_import, request, packet_id).packet
    context = {"packet": packet}
    if request.method == "GET":
        return render(request, "frontend/imports/gtea.html", context)
    uploaded = _uploaded(request)
    if uploaded is None:
        context["error"] = "Choose a label file."
        return render(request, "frontend/imports/gtea.html", context, status=400)
    name, data = uploaded
    preview = preview_gtea_labels(packet, name, data)
    context.update(preview=preview, data_b64=base64.b64encode(data).decode("ascii"))
    if request.POST.get("op") != "import":
        return render(request, "frontend/imports/gtea.html", context)
    if request.POST.get("sha256") != preview.sha256:
        context["error"] = "The file differs from the one previewed; preview it again."
        return render(request, "frontend/imports/gtea.html", context, status=409)
    if not preview.can_import:
        context["error"] = "Nothing was imported: fix the refused lines first."
        return render(request, "frontend/imports/gtea.html", context, status=400)
    try:
        version = do_import_provisional_version(
            packet, preview.events, actor=request.user, source=f"gtea:{name}", source_sha256=preview.sha256
        )
    except WorkflowError as error:
        context["error"] = error.message
        return render(request, "frontend/imports/gtea.html", context, status=error.status)
    context["version"] = version
    return render(request, "frontend/imports/gtea.html", context)
