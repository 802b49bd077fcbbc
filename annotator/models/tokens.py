import hashlib

from django.conf import settings
from django.db import models
from django.utils.crypto import salted_hmac

from annotator.models.checked import CheckedModel


class ApiToken(CheckedModel):
    """An API token for scripts. Only the SHA-256 of the token is stored; the token
    itself is shown once, when it is issued (``annotator.actions.tokens``)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, help_text="the first characters, to tell tokens apart")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    credential = models.CharField(
        max_length=64, default="", help_text="credential_of(user) when issued: a new password makes it stale"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"token {self.prefix}… of user {self.user_id}"


def token_digest(token: str) -> str:
    """SHA-256 of a token (tokens carry 256 random bits, so a fast hash is enough)."""
    return hashlib.sha256(token.encode()).hexdigest()


def credential_of(user) -> str:
    """A keyed digest of the account's password hash (as Django's session hash is): it
    changes whenever the password does, by whatever path (the pages, ``changepassword``,
    the admin), so a token issued before no longer matches."""
    return salted_hmac("frameledger.api-token", user.password, algorithm="sha256").hexdigest()
