"""The annotation, adjudication, version and maintainer pages (server-rendered shells).

Every page checks access the way the API does (``annotator.access``) and answers 404
to anyone who may not see it, so a page's existence says no more than the API would.
The data itself comes from the REST API in the browser; the shells carry only ids and
the URLs the scripts need.

``/packets/<id>/`` routes by role: an annotator gets their workspace (and only ever
their own ledger), the adjudicator the adjudication view (which waits until both
ledgers are frozen), a maintainer the packet's progress.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from annotator import access
from annotator.media.views import media_urls_for
from annotator.verify import version_problems


def _packet_access(request, packet_id: int, check=access.access_packet) -> access.PacketAccess:
    try:
        return check(request.user, packet_id)
    except access.NotFound:
        raise Http404("Not found") from None


def _packet_context(packet_access: access.PacketAccess, request) -> dict:
    packet = packet_access.packet
    media = media_urls_for("packet", packet.pk, packet.video)
    return {
        "packet_id": packet.pk,
        "packet_title": packet.title,
        "role": packet_access.role,
        "page_config": {
            "packetId": packet.pk,
            "role": packet_access.role,
            "username": request.user.username,
            "media": {
                "proxy": media["proxy"],
                "renditions": media["renditions_json"],
                "frames": media["frames"],
                "framePng": media["frame_png"],
                "thumbsMeta": media["thumbnails_meta"],
            },
        },
    }


@login_required
def packet_home(request, packet_id: int):
    packet_access = _packet_access(request, packet_id)
    context = _packet_context(packet_access, request)
    if packet_access.is_annotator:
        return render(request, "frontend/workspace.html", context)
    if packet_access.role == "adjudicator":
        return render(request, "frontend/adjudicate.html", context)
    return render(request, "frontend/maintainer_packet.html", context)


@login_required
def adjudication(request, packet_id: int):
    """The adjudication view; maintainers may follow it read-only."""
    packet_access = _packet_access(request, packet_id, access.access_adjudication_view)
    return render(request, "frontend/adjudicate.html", _packet_context(packet_access, request))


@login_required
def audit_log(request, packet_id: int):
    packet_access = _packet_access(request, packet_id, access.access_audit_log)
    return render(request, "frontend/maintainer_audit.html", _packet_context(packet_access, request))


@login_required
def version_page(request, version_id: int):
    try:
        packet_access, version = access.access_version(request.user, version_id)
    except access.NotFound:
        raise Http404("Not found") from None
    context = {
        "integrity_problems": [p.message for p in version_problems(version)],
        "version_id": version.pk,
        "packet_id": packet_access.packet.pk,
        "role": packet_access.role,
        "page_config": {"versionId": version.pk, "packetId": packet_access.packet.pk, "role": packet_access.role},
    }
    return render(request, "frontend/version.html", context)


@login_required
def new_packet(request):
    try:
        access.require_maintainer(request.user)
    except access.NotFound:
        raise Http404("Not found") from None
    return render(request, "frontend/maintainer_new.html", {"page_config": {"username": request.user.username}})
