"""System checks for a deployment's secrets (``manage.py check``)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured

MIN_SECRET_LENGTH = 32
# Values published with the project or Django: anyone can sign sessions with them.
KNOWN_SECRETS = frozenset(
    {
        "change-me",
        "changeme",
        "secret",
        "test-only-secret",
        "insecure-local-only-key",
        # the example of docs/deploy.md before it became a placeholder
        "pz3n0o8v2yc4sqe1lk7wm9ht5rb6xa0ud3fg8jj2nq4ts7vw1yz5cx",
    }
)
# Every ``DJANGO_SECRET_KEY=value`` printed in the project's own documents is published too.
_DOCUMENTED = re.compile(r"^\s*DJANGO_SECRET_KEY=(\S+)", re.MULTILINE)


@lru_cache(maxsize=1)
def documented_secrets() -> frozenset[str]:
    """The secret key values written in ``docs/*.md``, ``README.md`` and ``.env.example``."""
    root = Path(settings.BASE_DIR)
    found = set()
    for path in [root / ".env.example", root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        try:
            found.update(v.strip().lower() for v in _DOCUMENTED.findall(path.read_text(encoding="utf-8")))
        except OSError:
            continue
    return frozenset(found)


def secret_key_problem(secret: str) -> str | None:
    """Why ``secret`` must not sign sessions of a real installation, or None."""
    value = (secret or "").strip()
    if not value:
        return "is empty"
    if value.lower() in KNOWN_SECRETS | documented_secrets() or value.startswith("django-insecure-"):
        return "is a published example value"
    if len(value) < MIN_SECRET_LENGTH:
        return f"is {len(value)} characters long (at least {MIN_SECRET_LENGTH} needed)"
    if len(set(value)) < 5:
        return "uses fewer than 5 distinct characters"
    return None


@register()
def check_secret_key(app_configs, **kwargs):
    if settings.DEBUG:
        return []
    try:
        secret = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django refuses to hand out an empty key
        secret = ""
    problem = secret_key_problem(secret)
    if problem is None:
        return []
    return [
        Error(
            f"DJANGO_SECRET_KEY {problem}; with DEBUG off it would sign real sessions and CSRF tokens",
            hint="set DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) to a random value, e.g. python -c "
            '"import secrets; print(secrets.token_urlsafe(50))"',
            id="annotator.E020",
        )
    ]
