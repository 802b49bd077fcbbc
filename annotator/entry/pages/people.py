"""The people pages: a maintainer invites accounts, changes roles, deactivates
accounts and issues one-time password links; an invitee sets their password.

Server-rendered forms: each POST calls one ``annotator.actions.people`` ``check_*``
function (which calls its ``do_*``) and nothing else of substance. Everyone but a
maintainer gets 404 on every people page, except the one-time link page, which answers
anyone holding a valid link (and says "invalid or used" to everyone else).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.tokens import default_token_generator
from django.db.models import Q
from django.shortcuts import redirect, render
from django.utils.encoding import force_str
from django.utils.http import urlencode, urlsafe_base64_decode
from django.views.decorators.http import require_http_methods

from annotator.actions import people, tokens
from annotator.base.errors import NotPermitted, WorkflowError
from annotator.base.urlconverters import parse_id
from annotator.entry.pages.site import _or_404
from annotator.reads import access
from annotator.reads.windows import window_of

ROLE_CHOICES = list(people.ROLE_GROUPS)


def _administration(request) -> dict:
    """Whether the viewer may administer accounts now, and if not who can (separation of
    duties, ``docs/workflow.md``)."""
    refusal = access.administration_refusal(request.user)
    administrators = access.people_administrators() if refusal else []
    return {"refusal": refusal, "administrators": administrators, "sign_in_times": refusal is None}


def _people_context(request, **extra) -> dict:
    """One window of the accounts (by user name; ``?q=`` finds by part of the name or e-mail)."""
    found = (request.GET.get("q") or "").strip()[:150]
    accounts = get_user_model().objects.order_by("username", "pk")
    if found:
        accounts = accounts.filter(Q(username__icontains=found) | Q(email__icontains=found))
    window = window_of(accounts.prefetch_related("groups"), parse_id(request.GET.get("page")))
    users = window.rows
    administration = _administration(request)
    on_packets = people.packet_roles_by_person(u.pk for u in users)
    rows = [
        {
            "user": u,
            "roles": people.roles_of(u),
            "on_packets": on_packets[u.pk],  # shown when no role group says it
            "has_password": u.has_usable_password(),
            "last_login": u.last_login if administration["sign_in_times"] or u.pk == request.user.pk else None,
        }
        for u in users
    ]
    query = urlencode({"q": found}) if found else ""
    return {"people": rows, "window": window, "found": found, "query": query, "role_choices": ROLE_CHOICES,
            **administration, **extra}  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def people_list(request):
    """Everyone's account and roles; POST: invite a person (shows the one-time link)."""
    _or_404(access.require_maintainer, request)
    if request.method == "GET":
        return render(request, "frontend/people/list.html", _people_context(request))
    form = {k: request.POST.get(k, "") for k in ("username", "email")}
    roles = request.POST.getlist("roles")
    try:
        user, path = people.check_invite_person(
            actor=request.user, username=form["username"], email=form["email"], roles=roles
        )
    except WorkflowError as error:
        context = _people_context(request, error=error.message, form=form, form_roles=roles)
        return render(request, "frontend/people/list.html", context, status=error.status)
    context = _people_context(request, invited=user, link=request.build_absolute_uri(path))
    return render(request, "frontend/people/list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def person(request, person_id: int):
    """One account: roles, active, one-time password link, or a password set directly."""
    person = _or_404(access.access_person, request, person_id)
    context = {"person": person, "role_choices": ROLE_CHOICES, **_administration(request)}
    status = 200
    if request.method == "POST":
        op = request.POST.get("op")
        try:
            if op == "roles":
                people.check_set_roles(actor=request.user, person=person, roles=request.POST.getlist("roles"))
                context["notice"] = "Roles saved."
            elif op in {"deactivate", "activate"}:
                people.check_set_active(actor=request.user, person=person, active=op == "activate")
                context["notice"] = "Account activated." if op == "activate" else "Account deactivated."
            elif op == "link":
                path = people.check_issue_password_link(actor=request.user, person=person)
                context["link"] = request.build_absolute_uri(path)
            elif op == "revoke-token":
                tokens.check_revoke_token(actor=request.user, token_id=request.POST.get("token", ""))
                context["notice"] = "Token revoked."
            elif op == "password":
                people.check_set_password(
                    actor=request.user,
                    person=person,
                    password=request.POST.get("password", ""),
                    confirmation=request.POST.get("confirmation", ""),
                )
                context["notice"] = "Password set. Tell the person by a channel of your choice."
            else:
                context["error"] = "Unknown operation."
        except WorkflowError as error:
            context["error"], status = error.message, 403 if isinstance(error, NotPermitted) else 400
        except access.NotFound:
            context["error"], status = "No such token.", 404
        person.refresh_from_db()
    context["roles"] = people.roles_of(person)
    if not context["refusal"]:
        context["tokens"] = access.visible_tokens(request.user, person)
    return render(request, "frontend/people/person.html", context, status=status)


def _person_from_link(uidb64: str, token: str):
    try:
        user = get_user_model().objects.get(pk=int(force_str(urlsafe_base64_decode(uidb64))))
    except (ValueError, TypeError, OverflowError, get_user_model().DoesNotExist):
        return None
    if not user.is_active or not default_token_generator.check_token(user, token):
        return None
    return user


@require_http_methods(["GET", "POST"])
def set_password_from_link(request, uidb64: str, token: str):
    """The invitee's (or reset) page: a valid one-time link lets its holder set the
    account's password once; the link then stops working (the token hashes the password)."""
    user = _person_from_link(uidb64, token)
    if user is None:
        return render(request, "frontend/people/set_password.html", {"invalid": True}, status=404)
    context = {"person": user}
    if request.method == "POST":
        try:
            people.check_set_password(
                actor=user,
                person=user,
                password=request.POST.get("password", ""),
                confirmation=request.POST.get("confirmation", ""),
            )
        except WorkflowError as error:
            context["error"] = error.message
            return render(request, "frontend/people/set_password.html", context, status=400)
        return redirect("/login/?password_set=1")
    return render(request, "frontend/people/set_password.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def own_tokens(request):
    """One's own API tokens (prefix, issued, expires) and a button to revoke each."""
    context, status = {}, 200
    if request.method == "POST":
        try:
            tokens.check_revoke_token(actor=request.user, token_id=request.POST.get("token", ""))
            context["notice"] = "Token revoked."
        except access.NotFound:
            context["error"], status = "No such token.", 404
    context["tokens"] = access.visible_tokens(request.user)
    return render(request, "frontend/people/tokens.html", context, status=status)
