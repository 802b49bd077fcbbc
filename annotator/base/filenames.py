"""Names of downloaded files and archive folders, safe whatever the database holds.

Download names are built from stored text (task-kind slugs, submission file names). A
row saved before that text was validated may hold line breaks or path separators: a
``Content-Disposition`` header with CR/LF raises ``BadHeaderError`` (a 500 for every
download of that version), and a zip folder named ``../x`` escapes the folder it is
extracted into. :func:`safe_filename` keeps every ordinary name as it is and turns each
run of control characters and path separators into one ``_``.
"""

from __future__ import annotations

import posixpath
import re

from django.utils.http import content_disposition_header

MAX_CHARS = 200
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]+")


def safe_filename(name: str, fallback: str = "download") -> str:
    cleaned = _UNSAFE.sub("_", str(name)).strip(" .")
    if len(cleaned) > MAX_CHARS:
        stem, extension = posixpath.splitext(cleaned)
        extension = extension[:20]
        cleaned = stem[: MAX_CHARS - len(extension)] + extension
    return cleaned or fallback


def attachment(name: str) -> str:
    """A ``Content-Disposition`` value for downloading ``name`` (RFC 6266 quoting)."""
    return content_disposition_header(True, safe_filename(name))
