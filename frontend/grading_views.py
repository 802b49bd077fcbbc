"""Grading pages (server-rendered shells; the data comes from the grading REST API).

Maintainers of the packet only, except the agreement report, which the packet's
adjudicator may read once both ledgers are frozen (``annotator.access``). Anyone else
gets the 404 of a missing page.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from annotator import access
from scoring.registry import scorers_of


def _or_404(check, request, object_id):
    try:
        return check(request.user, object_id)
    except access.NotFound:
        raise Http404("Not found") from None


def _scorers(packet) -> list[str]:
    ids = [scorer.scorer_id for scorer in scorers_of(packet.task_kind.schema["family"])]
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
    packet = _or_404(access.access_grading_packet, request, packet_id)
    config = {"packetId": packet.pk, "scorers": _scorers(packet)}
    return render(request, "frontend/grading/packet.html", {"packet": packet, "config": config})


@login_required
def version_grading(request, version_id: int):
    version = _or_404(access.access_grading_version, request, version_id)
    scorer_id = request.GET.get("scorer") or version.packet.task_kind.scorer_id
    if scorer_id not in _scorers(version.packet):
        raise Http404("Not found")
    config = {"versionId": version.pk, "scorerId": scorer_id, "scorers": _scorers(version.packet)}
    return render(request, "frontend/grading/version.html", {"version": version, "config": config})


@login_required
def score_diagnostics(request, score_id: int):
    score = _or_404(access.access_score, request, score_id)
    config = {"scoreId": score.pk, "urls": _media_urls(score.version.packet)}
    return render(request, "frontend/grading/diagnostics.html", {"score": score, "config": config})


@login_required
def agreement(request, packet_id: int):
    packet_access = _or_404(lambda user, pk: access.access_agreement(user, pk, report=False), request, packet_id)
    packet = packet_access.packet
    return render(request, "frontend/grading/agreement.html", {"packet": packet, "config": {"packetId": packet.pk}})
