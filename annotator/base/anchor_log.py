"""Appending the audit chain's head to the anchor log, outside the database and the media.

After every write's commit, the entry it appended is written as one line
``SEQ:SHA256 TIME WHY key=KEY_ID sig=SIGNATURE`` (its Ed25519 signature over its SHA-256, so
the line is the signed head) to the append-only file ``FRAMELEDGER_AUDIT_ANCHOR`` (default
``$FRAMELEDGER_VAR_DIR/anchors/audit-anchors.log``: not in ``MEDIA_ROOT``, not in the database),
and the same line is logged on the ``annotator.audit`` logger at INFO, so that an operator's log
shipping keeps a copy off the machine. ``annotator.reads.anchors`` reads the file back.

Pure file I/O and logging; no models, no queries. A file that cannot be written is logged,
never raised: the write it follows has committed.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

logger = logging.getLogger("annotator.audit")
problems = logging.getLogger("annotator.reads.integrity")


def anchor_path() -> Path:
    configured = getattr(settings, "FRAMELEDGER_AUDIT_ANCHOR", "")
    return Path(configured) if configured else Path(settings.VAR_DIR) / "anchors" / "audit-anchors.log"


def anchor_line(seq: int, sha256: str, why: str, key_id: str | None = None, signature: str | None = None) -> str:
    line = f"{seq}:{sha256} {datetime.now(UTC).isoformat(timespec='seconds')} {why}"
    if key_id and signature:
        line += f" key={key_id} sig={signature}"
    return line


def append_anchor(line: str, *, sync: bool = False) -> bool:
    """Append ``line`` to the anchor file (and log it); whether the file took it. ``sync``:
    fsync before returning (publications, freezes, backups, clean checks)."""
    logger.info("audit head %s", line)
    path = anchor_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        problems.error("could not anchor the audit chain head in %s: %s", path, error)
        return False
    return True
