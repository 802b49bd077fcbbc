"""Every page of FrameLedger (server-rendered shells; the data comes from the REST API
through ``api.js``).

Every page checks access the way the API does, with the same ``annotator.reads.access``
function, and answers 404 to anyone who may not see it, so a page's existence says no
more than the API would; ``_or_404`` is the one place that turns a refusal into that 404.
The shells carry only ids and the URLs the scripts need.

``/packets/<id>/`` routes by role: an annotator gets their workspace (and only ever
their own ledger), the adjudicator the adjudication view (which waits until both
ledgers are frozen), a maintainer the packet's progress. The grading pages are for the
packet's maintainers, except the agreement report, which the packet's adjudicator may
read too once both ledgers are frozen.
"""

from __future__ import annotations

from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse, reverse_lazy

from annotator.actions import people
from annotator.base.errors import WorkflowError
from annotator.reads import access
from annotator.reads.media import media_urls_for
from annotator.reads.publishing import answers_public
from annotator.reads.search import is_annotation_only, is_moment_packet, player_remedy
from annotator.reads.verify import version_problems
from scoring.registry import scorers_of


def _or_404(check, request, *args, **kwargs):
    """``check(request.user, *args)`` (an ``annotator.reads.access`` function), or 404."""
    try:
        return check(request.user, *args, **kwargs)
    except access.NotFound:
        raise Http404("Not found") from None


def _player_urls(packet_id: int, media: dict | None = None) -> dict:
    media = media or media_urls_for("packet", packet_id)
    return {
        "proxy": media["proxy"],
        "renditions": media["renditions_json"],
        "frames": media["frames"],
        "framePng": media["frame_png"],
        # The ladder's on-demand rung: the player's "Full resolution" button asks here.
        "full": reverse("api-packet-full-rendition", kwargs={"packet_id": packet_id}),
    }


def _packet_context(packet_access: access.PacketAccess, request) -> dict:
    packet = packet_access.packet
    media = media_urls_for("packet", packet.pk, packet.video)
    # An imported annotation-only video has no files by design: the workspace says so
    # instead of trying (and failing) to load it. A video that should have media and does
    # not load keeps the player's load error.
    annotation_only = is_annotation_only(packet)
    return {
        "packet_id": packet.pk,
        "packet_title": packet.title,
        "role": packet_access.role,
        "annotation_only": annotation_only,
        "video_name": packet.video.original_name or packet.video.title,
        "player_remedy": player_remedy(packet) if annotation_only else "",
        "page_config": {
            "packetId": packet.pk,
            "role": packet_access.role,
            "username": request.user.username,
            "media": {**_player_urls(packet.pk, media), "thumbsMeta": media["thumbnails_meta"]},
            # Moment search (moment_search.js): shown only to whom the search API answers.
            "search": _may_search(request.user, packet),
            "videoId": packet.video_id,
            # No video by design (annotation-only): no player is loaded, its controls are refused.
            "annotationOnly": annotation_only,
        },
    }


def _may_search(user, packet) -> bool:
    if not is_moment_packet(packet):
        return False
    try:
        access.access_packet_search(user, packet.pk)
    except access.NotFound:
        return False
    return True


# ---------------------------------------------------------------------- the protocol


def favicon(request):
    """Browsers ask for /favicon.ico before reading a page's ``<link rel="icon">``."""
    return redirect(static("frontend/img/favicon.svg"), permanent=True)


@login_required
def home(request):
    return render(request, "frontend/home.html", {"is_maintainer": access.is_maintainer(request.user)})


class _OwnPasswordChange(auth_views.PasswordChangeView):
    """One's own password: Django's form (it checks the old password and runs the
    validators), stored by ``people.check_change_own_password`` (audited, API tokens
    revoked); this session stays signed in, the others are signed out."""

    def form_valid(self, form):
        try:
            people.check_change_own_password(
                actor=self.request.user,
                old_password=form.cleaned_data["old_password"],
                password=form.cleaned_data["new_password1"],
                confirmation=form.cleaned_data["new_password2"],
            )
        except WorkflowError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        update_session_auth_hash(self.request, self.request.user)
        return HttpResponseRedirect(self.get_success_url())


_PASSWORD_CHANGE = _OwnPasswordChange.as_view(
    template_name="frontend/password_change.html", success_url=reverse_lazy("password-change-done")
)
_PASSWORD_CHANGE_DONE = auth_views.PasswordChangeDoneView.as_view(template_name="frontend/password_change_done.html")


def password_change(request):
    return _PASSWORD_CHANGE(request)


def password_change_done(request):
    return _PASSWORD_CHANGE_DONE(request)


@login_required
def help_page(request):
    return render(request, "frontend/help.html", {"is_maintainer": access.is_maintainer(request.user)})


@login_required
def packet_home(request, packet_id: int):
    packet_access = _or_404(access.access_packet, request, packet_id)
    context = _packet_context(packet_access, request)
    if packet_access.is_annotator:
        return render(request, "frontend/workspace.html", context)
    if packet_access.role == "adjudicator":
        return render(request, "frontend/adjudicate.html", context)
    return render(request, "frontend/maintainer_packet.html", context)


@login_required
def packet_player(request, packet_id: int):
    """The player alone, for anyone on the packet."""
    packet_access = _or_404(access.access_packet, request, packet_id)
    packet = packet_access.packet
    context = {"packet_id": packet.pk, "role": packet_access.role, "media_urls": _player_urls(packet.pk)}
    return render(request, "frontend/player.html", context)


@login_required
def adjudication(request, packet_id: int):
    """The adjudication view; maintainers may follow it read-only."""
    packet_access = _or_404(access.access_adjudication_view, request, packet_id)
    return render(request, "frontend/adjudicate.html", _packet_context(packet_access, request))


@login_required
def audit_log(request, packet_id: int):
    packet_access = _or_404(access.access_audit_log, request, packet_id)
    return render(request, "frontend/maintainer_audit.html", _packet_context(packet_access, request))


@login_required
def version_page(request, version_id: int):
    packet_access, version = _or_404(access.access_version, request, version_id)
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
    _or_404(access.require_maintainer, request)
    return render(request, "frontend/maintainer_new.html", {"page_config": {"username": request.user.username}})


# -------------------------------------------------------------------------- grading


def _scorers(packet) -> list[str]:
    ids = [scorer.scorer_id for scorer in scorers_of(packet.task_kind.schema["family"])]
    return sorted(ids, key=lambda s: (s != packet.task_kind.scorer_id, s))


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
    context = {"version": version, "config": config, "answers": answers_public(version)}
    return render(request, "frontend/grading/version.html", context)


@login_required
def score_diagnostics(request, score_id: int):
    score = _or_404(access.access_score, request, score_id)
    config = {"scoreId": score.pk, "urls": _player_urls(score.version.packet_id)}
    return render(request, "frontend/grading/diagnostics.html", {"score": score, "config": config})


@login_required
def agreement(request, packet_id: int):
    packet = _or_404(access.access_agreement, request, packet_id, report=False).packet
    return render(request, "frontend/grading/agreement.html", {"packet": packet, "config": {"packetId": packet.pk}})
