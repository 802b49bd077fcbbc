"""API tokens: issuing and revoking. Only a digest is stored; the token is returned once.

A token is bound to the password it was issued under (``ApiToken.credential``): a new
password, set by anyone through any path, makes every older token of the account stale
(``annotator.entry.api.authentication`` refuses it), and the writes that change a password
or deactivate an account here also delete them, with an audit entry naming each. A person
holds at most ``FRAMELEDGER_TOKENS_PER_PERSON`` unexpired tokens. Audit entries name a token
by its id and its first characters (``prefix``), never by more.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.base.errors import Conflict
from annotator.models import ApiToken
from annotator.models.audit_log import record
from annotator.models.tokens import credential_of, token_digest
from annotator.reads import access


@transaction.atomic
def do_issue_token(user, *, now=None) -> tuple[ApiToken, str]:
    """A new token for ``user``, valid for ``FRAMELEDGER_TOKEN_TTL_SECONDS``: the row and
    the plain token, which is not stored anywhere and cannot be shown again. Expired tokens
    of the user are deleted on the way; over the cap, nothing is issued (409)."""
    now = now or timezone.now()
    type(user).objects.select_for_update().filter(pk=user.pk).first()  # one issuer at a time per person
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    cap = settings.FRAMELEDGER_TOKENS_PER_PERSON
    if ApiToken.objects.filter(user=user).count() >= cap:
        raise Conflict(
            f"you hold {cap} API tokens, the most one person may; revoke one (/account/tokens/ or"
            " DELETE /api/auth/tokens/<id>/) or wait for one to expire",
            field="token",
        )
    token = secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user,
        digest=token_digest(token),
        prefix=token[:8],
        created_at=now,
        expires_at=now + timedelta(seconds=settings.FRAMELEDGER_TOKEN_TTL_SECONDS),
        credential=credential_of(user),
    )
    record(user, "issue_token", user, details={"username": user.username, "token": row.pk, "prefix": row.prefix})
    return row, token


def do_revoke_tokens(*, actor, person, reason: str, tokens=None) -> int:
    """Delete ``tokens`` of ``person`` (all of them when ``None``), one audit entry each
    naming the token; the number revoked. Caller holds the transaction of the write that
    asks for it (a password change, a deactivation) or is ``check_revoke_token``."""
    rows = list(ApiToken.objects.filter(user=person) if tokens is None else tokens)
    for row in rows:
        details = {"username": person.username, "token": row.pk, "prefix": row.prefix, "reason": reason}
        record(actor, "revoke_token", person, details=details)
    ApiToken.objects.filter(pk__in=[row.pk for row in rows]).delete()
    return len(rows)


def do_revoke_token(*, actor, token: ApiToken) -> None:
    """Revoke one token (the caller holds its row locked: ``access.access_token``)."""
    do_revoke_tokens(actor=actor, person=token.user, reason="revoked", tokens=[token])


@transaction.atomic
def check_revoke_token(*, actor, token_id) -> ApiToken:
    """Revoke one token: one's own, or (a maintainer who may administer accounts) anyone's."""
    token = access.access_token(actor, token_id, for_update=True)
    do_revoke_token(actor=actor, token=token)
    return token
