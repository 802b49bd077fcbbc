"""Brute-force limits on password sign-in (``/login/``, ``/admin/login/``, ``/api/auth/token/``).

Failed attempts are counted in Django's cache (``deploy/settings.py``: Redis when
``REDIS_URL`` is set, otherwise a file cache under ``FRAMELEDGER_VAR_DIR``, so every web
process of a machine shares the counts) per client address and per username, in a
window of ``FRAMELEDGER_LOGIN_WINDOW_SECONDS`` that starts at the first failure. Reaching
``FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP`` or ``..._PER_USER`` locks that address or that
username out for ``FRAMELEDGER_LOGIN_LOCKOUT_SECONDS``: every attempt is refused, a
correct password included, with 429 and ``Retry-After``. A success clears the
username's count (not the address's).

Two places use it: ``ThrottledModelBackend`` (every ``authenticate()`` with a password
counts and is refused during a lock-out) and ``refuse_when_locked`` around the three
sign-in views (so the answer is a 429, not a form error).
"""

from __future__ import annotations

import functools
import hashlib
import time

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse

PREFIX = "fl-login"


class LockedOut(PermissionDenied):
    def __init__(self, retry_after: int):
        super().__init__(f"too many failed sign-in attempts; try again in {retry_after} s")
        self.retry_after = retry_after


def _cache():
    return caches[settings.FRAMELEDGER_LOGIN_CACHE]


def client_address(request) -> str:
    """The address the server saw (Daphne's ``--proxy-headers`` puts the forwarded one here)."""
    return (request.META.get("REMOTE_ADDR") if request is not None else None) or "unknown"


def _keys(address: str, username: str | None) -> list[tuple[str, int]]:
    keys = [(f"{PREFIX}:ip:{address}", settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP)]
    if username:
        name = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
        keys.append((f"{PREFIX}:user:{name}", settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER))
    return keys


def locked_for(address: str, username: str | None) -> int:
    """Seconds left of a lock-out on this address or username (0: not locked)."""
    cache = _cache()
    now = time.time()
    until = [cache.get(f"{key}:locked") for key, _ in _keys(address, username)]
    return max((int(u - now) + 1 for u in until if u and u > now), default=0)


def check_allowed(address: str, username: str | None) -> None:
    left = locked_for(address, username)
    if left:
        raise LockedOut(left)


def record_failure(address: str, username: str | None) -> None:
    cache = _cache()
    window, lockout = settings.FRAMELEDGER_LOGIN_WINDOW_SECONDS, settings.FRAMELEDGER_LOGIN_LOCKOUT_SECONDS
    for key, limit in _keys(address, username):
        cache.add(key, 0, timeout=window)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)
            count = 1
        if count >= limit:
            cache.set(f"{key}:locked", time.time() + lockout, timeout=lockout)
            cache.delete(key)


def record_success(address: str, username: str | None) -> None:
    _cache().delete(_keys(address, username)[-1][0] if username else "")


class ThrottledModelBackend(ModelBackend):
    """Django's model backend with the counts and lock-outs above."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(self._username_field())
        if username is None or password is None:
            return None
        address = client_address(request)
        check_allowed(address, username)  # PermissionDenied stops authenticate() at once
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            record_failure(address, username)
        else:
            record_success(address, username)
        return user

    @staticmethod
    def _username_field() -> str:
        from django.contrib.auth import get_user_model

        return get_user_model().USERNAME_FIELD


def refuse_when_locked(view):
    """Wrap a sign-in form view: a POST from a locked-out address or for a locked-out
    username is answered 429 with ``Retry-After`` before the view runs."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method == "POST":
            left = locked_for(client_address(request), request.POST.get("username"))
            if left:
                response = HttpResponse(
                    f"Too many failed sign-in attempts. Try again in {left} seconds.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(left)
                return response
        return view(request, *args, **kwargs)

    return wrapped
