"""The player page: ``/packets/<id>/player/`` for anyone on the packet (404 otherwise)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from annotator import access


@login_required
def packet_player(request, packet_id: int):
    try:
        packet_access = access.access_packet(request.user, packet_id)
    except access.NotFound:
        raise Http404("Not found") from None
    packet = packet_access.packet
    kwargs = {"object_id": packet.pk}
    media_urls = {
        "proxy": reverse("media-packet-proxy", kwargs=kwargs),
        "renditions": reverse("media-packet-renditions", kwargs=kwargs),
        "frames": reverse("media-packet-frames", kwargs=kwargs),
        "framePng": reverse("media-packet-frame", kwargs={**kwargs, "n": 0}).removesuffix("0.png") + "{n}.png",
    }
    context = {"packet_id": packet.pk, "role": packet_access.role, "media_urls": media_urls}
    return render(request, "frontend/player.html", context)
