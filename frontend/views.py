"""Server-rendered shells. The pages get their data from the REST API (``api.js``)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from annotator import access


@login_required
def home(request):
    return render(request, "frontend/home.html", {"is_maintainer": access.is_maintainer(request.user)})


def packet_page(template: str, *, roles: set[str] | None = None):
    """A page about one packet, shown only to users ``access_packet`` lets through."""

    @login_required
    def view(request, packet_id):
        try:
            packet_access = access.access_packet(request.user, packet_id)
        except access.NotFound:
            raise Http404("Not found") from None
        if roles is not None and packet_access.role not in roles:
            raise Http404("Not found")
        return render(request, template, {"packet_id": packet_access.packet.pk, "role": packet_access.role})

    return view
