"""Grading pages (server-rendered shells; the data comes from the grading REST API).

Maintainers only, except the agreement report, which the packet's adjudicator may read
once both ledgers are frozen. Anyone else gets the 404 of a missing page.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from annotator import access
from annotator.models import SubmissionScore
from scoring import SCORERS


def _packet(request, packet_id, roles=frozenset({"maintainer"})):
    try:
        packet_access = access.access_packet(request.user, packet_id)
    except access.NotFound:
        raise Http404("Not found") from None
    if packet_access.role not in roles:
        raise Http404("Not found")
    return packet_access.packet


def _scorers(packet) -> list[str]:
    family = packet.task_kind.schema["family"]
    ids = [s for s, scorer in SCORERS.items() if scorer.kind == family]
    return sorted(ids, key=lambda s: (s != packet.task_kind.scorer_id, s))


def _media_urls(packet) -> dict:
    kwargs = {"object_id": packet.pk}
    return {
        "proxy": reverse("media-packet-proxy", kwargs=kwargs),
        "frames": reverse("media-packet-frames", kwargs=kwargs),
        "framePng": reverse("media-packet-frame", kwargs={**kwargs, "n": 0}).removesuffix("0.png") + "{n}.png",
    }


@login_required
def packet_grading(request, packet_id: int):
    packet = _packet(request, packet_id)
    config = {"packetId": packet.pk, "scorers": _scorers(packet)}
    return render(request, "frontend/grading/packet.html", {"packet": packet, "config": config})


@login_required
def version_grading(request, version_id: int):
    try:
        packet_access, version = access.access_version(request.user, version_id)
    except access.NotFound:
        raise Http404("Not found") from None
    if packet_access.role != "maintainer":
        raise Http404("Not found")
    scorer_id = request.GET.get("scorer") or version.packet.task_kind.scorer_id
    if scorer_id not in _scorers(version.packet):
        raise Http404("Not found")
    config = {"versionId": version.pk, "scorerId": scorer_id, "scorers": _scorers(version.packet)}
    return render(request, "frontend/grading/version.html", {"version": version, "config": config})


@login_required
def score_diagnostics(request, score_id: int):
    if not access.is_maintainer(request.user):
        raise Http404("Not found")
    score = SubmissionScore.objects.select_related("version__packet", "submission").filter(pk=score_id).first()
    if score is None:
        raise Http404("Not found")
    packet = _packet(request, score.version.packet_id)
    config = {"scoreId": score.pk, "urls": _media_urls(packet)}
    return render(request, "frontend/grading/diagnostics.html", {"score": score, "config": config})


@login_required
def agreement(request, packet_id: int):
    packet = _packet(request, packet_id, roles=frozenset({"maintainer", "adjudicator"}))
    return render(request, "frontend/grading/agreement.html", {"packet": packet, "config": {"packetId": packet.pk}})
