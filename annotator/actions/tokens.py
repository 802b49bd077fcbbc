"""Issuing API tokens. Only a digest is stored; the token is returned once."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from annotator.models import ApiToken
from annotator.models.tokens import token_digest


def do_issue_token(user, *, now=None) -> tuple[ApiToken, str]:
    """A new token for ``user``, valid for ``FRAMELEDGER_TOKEN_TTL_SECONDS``: the row and
    the plain token, which is not stored anywhere and cannot be shown again.
    Expired tokens of the user are deleted on the way."""
    now = now or timezone.now()
    token = secrets.token_urlsafe(32)
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    row = ApiToken.objects.create(
        user=user,
        digest=token_digest(token),
        prefix=token[:8],
        created_at=now,
        expires_at=now + timedelta(seconds=settings.FRAMELEDGER_TOKEN_TTL_SECONDS),
    )
    return row, token
