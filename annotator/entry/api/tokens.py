"""API tokens: ``POST /api/auth/token/`` and ``Authorization: Token …``.

A token is issued on a correct username and password (the sign-in limits of
``annotator.base.login_guard`` apply), shown once, stored only as its SHA-256 and refused
after ``FRAMELEDGER_TOKEN_TTL_SECONDS``.
"""

from __future__ import annotations

from django.contrib.auth import authenticate
from rest_framework import exceptions
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.tokens import do_issue_token
from annotator.base.login_guard import client_address, locked_for
from annotator.entry.api.views import body_field


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
