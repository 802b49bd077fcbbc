"""Who sends a large body is decided before a byte of it is read.

The upload routes (``FRAMELEDGER_UPLOAD_PATHS``) accept bodies of gigabytes. Django reads a
whole request body (to a temporary file) before the view runs, so without this layer an
anonymous client could make the server write 8 GiB to disk, and parse it, before the view
answered ``403``. ``UploadAuthMiddleware`` (in ``deploy.asgi``, just inside the body limits)
looks at the request head of a body larger than ``FRAMELEDGER_MAX_BODY_BYTES`` (declared, or
chunked with no length) on such a route, and answers ``403`` with the API's error body
(``not_authenticated``, as DRF would) unless the head names a signed-in user:

- a session cookie (``SESSION_COOKIE_NAME``) whose session holds an active user, checked as
  Django's ``get_user`` checks it (the session's auth hash against the user's password hash);
- or ``Authorization: Token <key>`` with a valid, unexpired API token of an active user
  (``annotator.entry.api.authentication.ExpiringTokenAuthentication``).

The view still makes every decision (role, CSRF, the object's access): this layer only
keeps strangers from sending large bodies. Small bodies pass untouched, so an anonymous
``POST`` gets the view's own answer.
"""

from __future__ import annotations

from http.cookies import SimpleCookie
from types import SimpleNamespace

from asgiref.sync import sync_to_async
from django.conf import settings

from deploy.body_limits import declared_length, limit_for, send_error

NOT_AUTHENTICATED = "Authentication credentials were not provided."


def _header(headers, name: bytes) -> bytes | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def needs_identity(scope) -> bool:
    """A body that may be large, on a route that accepts large ones."""
    small = settings.FRAMELEDGER_MAX_BODY_BYTES
    if limit_for(scope["path"]) <= small:
        return False
    length, _valid = declared_length(scope.get("headers", []))
    if length is None:
        chunked = _header(scope.get("headers", []), b"transfer-encoding")
        return chunked is not None
    return length > small


def _session_user(cookie_header: bytes | None) -> bool:
    if not cookie_header:
        return False
    cookies = SimpleCookie()
    try:
        cookies.load(cookie_header.decode("latin-1"))
    except Exception:  # noqa: BLE001 - a malformed cookie header names nobody
        return False
    morsel = cookies.get(settings.SESSION_COOKIE_NAME)
    if morsel is None or not morsel.value:
        return False
    from importlib import import_module

    from django.contrib.auth import get_user

    store = import_module(settings.SESSION_ENGINE).SessionStore(morsel.value)
    user = get_user(SimpleNamespace(session=store))
    return bool(user.is_authenticated and user.is_active)


def _token_user(authorization: bytes | None) -> bool:
    if not authorization:
        return False
    parts = authorization.split()
    if len(parts) != 2 or parts[0].lower() != b"token":
        return False
    from rest_framework import exceptions

    from annotator.entry.api.authentication import ExpiringTokenAuthentication

    try:
        key = parts[1].decode("ascii")
        ExpiringTokenAuthentication().authenticate_credentials(key)
    except (UnicodeDecodeError, exceptions.AuthenticationFailed):
        return False
    return True


def identified(headers) -> bool:
    """True when the request head names an active, signed-in user (session or token)."""
    from django.db import close_old_connections

    close_old_connections()
    try:
        return _token_user(_header(headers, b"authorization")) or _session_user(_header(headers, b"cookie"))
    finally:
        close_old_connections()


class UploadAuthMiddleware:
    """ASGI middleware: a large body on an upload route needs a signed-in client."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and needs_identity(scope):
            if not await sync_to_async(identified, thread_sensitive=True)(scope.get("headers", [])):
                return await send_error(send, receive, 403, "not_authenticated", NOT_AUTHENTICATED)
        return await self.app(scope, receive, send)
