"""Django set up for a bench script, one way for all of them.

A script puts the repository root first on ``sys.path`` (ahead of ``bench/``, where
``bench/scoring.py`` and ``bench/retrieval.py`` would hide the packages), then::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._django import REPO_ROOT, setup_django  # noqa: E402

``setup_django()`` keeps a ``DJANGO_SETTINGS_MODULE`` that is already set (the caller's
environment, or what the script chose before) and otherwise uses ``deploy.test_settings``.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def setup_django(settings: str = "deploy.test_settings") -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings)
    import django

    django.setup()
