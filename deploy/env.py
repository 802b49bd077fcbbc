"""Small typed readers for environment variables.

Every reader fails loudly (``ImproperlyConfigured``) on a value it cannot parse, so
a typo in a deployment never silently falls back to a default. Each name may also
be given as ``NAME_FILE`` pointing to a file holding the value (for secrets).
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        try:
            return Path(file_name).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name!r} cannot be read: {exc}") from exc
    return os.environ.get(name)


def envstr(name: str, default: str | None = None) -> str:
    value = _raw(name)
    if value is None:
        if default is None:
            raise ImproperlyConfigured(f"Environment variable {name} is required")
        return default
    return value


def envbool(name: str, default: bool = False) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def envint(name: str, default: int) -> int:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None


def envlist(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def proxy_ssl_header(value: str) -> tuple[str, str] | None:
    """``DJANGO_SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto:https`` -> ``("HTTP_X_FORWARDED_PROTO", "https")``;
    empty -> None (the server is reached directly)."""
    value = value.strip()
    if not value:
        return None
    header, sep, expected = value.partition(":")
    if not sep or not header.strip() or not expected.strip():
        raise ImproperlyConfigured(f"DJANGO_SECURE_PROXY_SSL_HEADER={value!r} is not HEADER:VALUE")
    return "HTTP_" + header.strip().upper().replace("-", "_"), expected.strip()
