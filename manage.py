#!/usr/bin/env python
"""Django's command-line utility for FrameLedger.

Without ``DJANGO_SECRET_KEY`` (or ``DJANGO_SECRET_KEY_FILE``) in the environment, the
local secret that ``bin/run-demo`` creates (``$FRAMELEDGER_VAR_DIR/secret_key``, by
default ``var/secret_key``) is used, so commands run against the demo installation
sign with the same key as its server. When there is none, or the settings cannot be
loaded for another reason, the command ends with one line saying why, not a traceback.
"""

import os
import sys
from pathlib import Path


def use_local_secret(environ=os.environ) -> None:
    if environ.get("DJANGO_SECRET_KEY") or environ.get("DJANGO_SECRET_KEY_FILE"):
        return
    var_dir = Path(environ.get("FRAMELEDGER_VAR_DIR") or Path(__file__).resolve().parent / "var")
    secret = var_dir / "secret_key"
    if secret.is_file() and secret.stat().st_size:
        environ["DJANGO_SECRET_KEY_FILE"] = str(secret)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")
    use_local_secret()
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.SECRET_KEY  # noqa: B018 (loads the settings module now, to report a bad one in one line)
    except ImproperlyConfigured as exc:
        hint = ""
        if "DJANGO_SECRET_KEY" in str(exc):
            hint = (
                " (set DJANGO_SECRET_KEY or DJANGO_SECRET_KEY_FILE, or run bin/run-demo once to create var/secret_key)"
            )
        sys.exit(f"manage.py: {exc}{hint}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
