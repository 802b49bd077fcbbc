"""Removing media no row points to (``manage.py orphan_media --delete``); the list and
the rules are ``annotator.reads.media_orphans``."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from django.conf import settings

from annotator.reads.media_orphans import Orphan, orphan_media

logger = logging.getLogger(__name__)


def do_remove_orphan_media(*, min_age: float = 3600.0) -> list[Orphan]:
    """Remove every orphan found now (the list is taken again here, so nothing a row came
    to name since an earlier listing goes); returns what was removed."""
    root = Path(settings.MEDIA_ROOT)
    removed = []
    for orphan in orphan_media(min_age):
        path = root / orphan.name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        logger.warning("removed orphan media %s (%s bytes): %s", orphan.name, orphan.size, orphan.why)
        removed.append(orphan)
    return removed
