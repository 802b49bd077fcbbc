"""The audit chain's head, anchored outside the database.

The chain shows any entry edited, deleted or inserted in its middle; cutting its newest
entries (or rewriting the chain from some entry on) leaves a shorter, self-consistent chain
that only an outside record of an earlier head can expose. So the head is appended, one line
``SEQ:SHA256 TIME WHY``, to an append-only file beside the media
(``FRAMELEDGER_AUDIT_ANCHOR``, default ``MEDIA_ROOT/audit-anchors.log``): after every
publication and freeze (once committed), by every clean ``verify_integrity`` and by every
backup (``deploy.backup``, which also keeps it in ``backup.json``). ``verify_integrity``
checks every anchored head by default: each must still be in the chain with the same hash.

Keep the file where the database's writers cannot rewrite it (another volume, or copied off
the machine with the backups): its strength is being out of the database's reach.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from annotator.models import AuditEntry

logger = logging.getLogger("annotator.reads.integrity")


@dataclass(frozen=True)
class Anchor:
    seq: int
    sha256: str
    line: int
    text: str


def anchor_path() -> Path:
    configured = getattr(settings, "FRAMELEDGER_AUDIT_ANCHOR", "")
    return Path(configured) if configured else Path(settings.MEDIA_ROOT) / "audit-anchors.log"


def chain_head() -> tuple[int, str] | None:
    row = AuditEntry.objects.order_by("-seq").values_list("seq", "sha256").first()
    return (row[0], row[1]) if row else None


def anchor_head(why: str) -> tuple[int, str] | None:
    """Append the current head to the anchor file; the head, or None when there is none
    (or the file cannot be written: logged, never raised, the write it follows is done)."""
    head = chain_head()
    if head is None:
        return None
    path = anchor_path()
    line = f"{head[0]}:{head[1]} {timezone.now().isoformat(timespec='seconds')} {why}\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        logger.error("could not anchor the audit chain head in %s: %s", path, error)
        return None
    return head


def anchor_on_commit(why: str) -> None:
    from django.db import transaction

    transaction.on_commit(lambda: anchor_head(why))


def set_aside(why: str) -> Path | None:
    """Rename the anchor file (``manage.py flush``: the chain starts again on purpose); the
    old record is kept beside it."""
    path = anchor_path()
    if not path.exists():
        return None
    target = path.with_name(f"{path.name}.{why}-{timezone.now().strftime('%Y%m%dT%H%M%S%f')}")
    path.rename(target)
    return target


def anchors() -> list[Anchor]:
    """The anchored heads, in file order (unreadable lines are skipped)."""
    try:
        text = anchor_path().read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        head = line.split(" ", 1)[0]
        seq, _, sha = head.partition(":")
        if seq.isdigit() and len(sha) == 64:
            found.append(Anchor(int(seq), sha, number, line.strip()))
    return found


def anchor_problems() -> list[tuple[str, str]]:
    """(object, message) for every anchored head no longer in the chain as recorded."""
    recorded = anchors()
    if not recorded:
        return []
    stored = dict(AuditEntry.objects.filter(seq__in={a.seq for a in recorded}).values_list("seq", "sha256").iterator())
    problems = []
    for anchor in {a.seq: a for a in reversed(recorded)}.values():  # the first line per seq
        where = f"{anchor_path()} line {anchor.line}"
        found = stored.get(anchor.seq)
        if found is None:
            message = f"anchored as a chain head ({where}) and now missing: the chain was cut"
            problems.append((f"audit entry seq {anchor.seq}", message))
        elif found != anchor.sha256:
            problems.append(
                (f"audit entry seq {anchor.seq}", f"its SHA-256 differs from the head anchored in {where}: rewritten")
            )
    return problems
