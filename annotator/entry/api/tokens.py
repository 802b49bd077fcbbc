"""API tokens: ``POST /api/auth/token/`` and ``Authorization: Token …``; the list of
one's tokens (``GET /api/auth/tokens/``, ``?user=<id>`` for a maintainer) and revoking one
(``DELETE /api/auth/tokens/<id>/``).

A token is issued on a correct username and password (the sign-in limits of
``annotator.base.login_guard`` apply), shown once, stored only as its SHA-256, refused
after ``FRAMELEDGER_TOKEN_TTL_SECONDS`` and once the password changes
(``annotator.actions.tokens``).
"""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from rest_framework import exceptions, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.tokens import check_revoke_token, do_issue_token
from annotator.base.login_guard import client_address, locked_for
from annotator.base.urlconverters import parse_id
from annotator.entry.api.views import body_field
from annotator.reads import access, present


class SignInLocked(exceptions.Throttled):
    default_code = "locked_out"


class TokenView(APIView):
    """Exchange a username and password for a new API token (shown once)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    def post(self, request):
        username = body_field(request, "username")
        password = body_field(request, "password")
        left = locked_for(client_address(request), username)
        if left:
            raise SignInLocked(wait=left, detail=f"too many failed sign-in attempts; try again in {left} s")
        user = authenticate(request, username=username, password=password)
        if user is None:
            raise exceptions.ValidationError({"password": ["Unable to sign in with the given username and password."]})
        token, plain = do_issue_token(user)
        return Response({"token": plain, "expires_at": token.expires_at.isoformat()})


class TokenListView(APIView):
    """One's own API tokens (never the tokens themselves); ``?user=<id>``: that person's,
    for a maintainer who may administer accounts."""

    def get(self, request):
        person = None
        if "user" in request.query_params:
            person_id = parse_id(request.query_params["user"])
            person = get_user_model().objects.filter(pk=person_id).first() if person_id is not None else None
            if person is None:
                raise access.NotFound("user")
        return Response([present.token_view(t) for t in access.visible_tokens(request.user, person)])


class TokenDetailView(APIView):
    """Revoke one token (one's own; a maintainer who may administer accounts: anyone's)."""

    def delete(self, request, token_id):
        check_revoke_token(actor=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
