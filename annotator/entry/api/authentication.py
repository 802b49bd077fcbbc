"""``Authorization: Token …`` with hashed, expiring tokens (issued by ``annotator.entry.api.tokens``).

Kept apart from the views: DRF imports authentication classes while ``rest_framework.views``
is still loading."""

from __future__ import annotations

from django.utils import timezone
from django.utils.crypto import constant_time_compare
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from annotator.models import ApiToken
from annotator.models.tokens import credential_of, token_digest


class ExpiringTokenAuthentication(TokenAuthentication):
    """Looks the token up by its SHA-256; refuses expired tokens, inactive users and tokens
    issued under another password than the account's current one."""

    def authenticate_credentials(self, key):
        token = ApiToken.objects.select_related("user").filter(digest=token_digest(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("Token expired; ask /api/auth/token/ for a new one.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if not constant_time_compare(token.credential, credential_of(token.user)):
            raise exceptions.AuthenticationFailed("Token revoked: the password changed; ask for a new one.")
        return token.user, token
