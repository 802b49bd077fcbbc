"""Brute-force limits on password sign-in (``/login/``, ``/admin/login/``, ``/api/auth/token/``)
that an attacker cannot turn on the account's owner.

Failed attempts are counted in Django's cache (``deploy/settings.py``: Redis when ``REDIS_URL``
is set, otherwise a file cache under ``FRAMELEDGER_VAR_DIR``, so every web process of a machine
shares the counts), each in a window of ``FRAMELEDGER_LOGIN_WINDOW_SECONDS`` from its first
failure:

- **per address** (any usernames): ``FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP`` failures lock that
  address out for ``FRAMELEDGER_LOGIN_LOCKOUT_SECONDS``;
- **per account and address**: ``FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER`` failures lock that
  username *from that address* out as long: the account's owner, signing in from elsewhere,
  is not affected;
- **per account, across addresses** (a guessing attack spread over many addresses):
  ``FRAMELEDGER_LOGIN_MAX_FAILURES_PER_ACCOUNT`` failures put the account on the **slow path**
  for the rest of the window instead of locking it: from addresses that have not signed in
  to it before (``FRAMELEDGER_LOGIN_KNOWN_SECONDS``), the account takes one password attempt
  every ``FRAMELEDGER_LOGIN_SLOW_SECONDS``, the others waiting that long (429, ``Retry-After``);
  addresses it was signed in from go on as usual.

A refusal is a 429 with ``Retry-After`` (a text page for the forms, the JSON error body for
the API), a correct password included. A success clears the account-and-address count and
remembers the address as known to the account. ``docs/deploy.md`` sets the choice against
OWASP's guidance.

Two places use it: ``ThrottledModelBackend`` (every ``authenticate()`` with a password
counts and is refused while limited) and ``refuse_when_locked`` around the three sign-in
views (so the answer is a 429, not a form error).
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


def _name(username: str) -> str:
    return hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]


def _address(address: str) -> str:
    return hashlib.sha256(address.encode()).hexdigest()[:32]


def _keys(address: str, username: str | None) -> list[tuple[str, int]]:
    """The counts that lock out: the address, and the account from this address."""
    keys = [(f"{PREFIX}:ip:{address}", settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP)]
    if username:
        keys.append(
            (f"{PREFIX}:pair:{_name(username)}:{_address(address)}", settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER)
        )
    return keys


def _known(address: str, username: str) -> bool:
    return bool(_cache().get(f"{PREFIX}:known:{_name(username)}:{_address(address)}"))


def _slow_wait(address: str, username: str | None, now: float) -> int:
    """Seconds this address must wait for the account's next attempt on the slow path (0: none)."""
    if not username:
        return 0
    cache, name = _cache(), _name(username)
    if not cache.get(f"{PREFIX}:slow:{name}") or _known(address, username):
        return 0
    following = cache.get(f"{PREFIX}:next:{name}") or 0
    return int(following - now) + 1 if following > now else 0


def locked_for(address: str, username: str | None) -> int:
    """Seconds left of a lock-out of this address, or of this account from this address, or
    of the account's slow-path wait (0: the attempt may go ahead)."""
    cache = _cache()
    now = time.time()
    until = [cache.get(f"{key}:locked") for key, _ in _keys(address, username)]
    locked = max((int(u - now) + 1 for u in until if u and u > now), default=0)
    return max(locked, _slow_wait(address, username, now))


def check_allowed(address: str, username: str | None) -> None:
    """Refuse a limited attempt; on the slow path, an attempt that goes ahead takes the
    account's next slot."""
    left = locked_for(address, username)
    if left:
        raise LockedOut(left)
    cache = _cache()
    if username and cache.get(f"{PREFIX}:slow:{_name(username)}") and not _known(address, username):
        slow = settings.FRAMELEDGER_LOGIN_SLOW_SECONDS
        cache.set(f"{PREFIX}:next:{_name(username)}", time.time() + slow, timeout=slow)


def _count(cache, key: str, window: int) -> int:
    cache.add(key, 0, timeout=window)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=window)
        return 1


def record_failure(address: str, username: str | None) -> None:
    cache = _cache()
    window, lockout = settings.FRAMELEDGER_LOGIN_WINDOW_SECONDS, settings.FRAMELEDGER_LOGIN_LOCKOUT_SECONDS
    for key, limit in _keys(address, username):
        if _count(cache, key, window) >= limit:
            cache.set(f"{key}:locked", time.time() + lockout, timeout=lockout)
            cache.delete(key)
    if username:
        key = f"{PREFIX}:account:{_name(username)}"
        if _count(cache, key, window) >= settings.FRAMELEDGER_LOGIN_MAX_FAILURES_PER_ACCOUNT:
            cache.set(f"{PREFIX}:slow:{_name(username)}", True, timeout=window)


def record_success(address: str, username: str | None) -> None:
    if not username:
        return
    cache = _cache()
    cache.delete(_keys(address, username)[-1][0])
    known = f"{PREFIX}:known:{_name(username)}:{_address(address)}"
    cache.set(known, True, timeout=settings.FRAMELEDGER_LOGIN_KNOWN_SECONDS)


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
