"""The audit chain's head, anchored outside the database (``annotator.base.anchor_log``).

The chain shows any entry edited, deleted or inserted in its middle; cutting its newest
entries (or rewriting the chain from some entry on) leaves a shorter, self-consistent chain
that only an outside record of an earlier head can expose. So every entry, once its write has
committed, is appended as a signed head, one line ``SEQ:SHA256 TIME WHY key=… sig=…``, to an
append-only file outside the database and the media (``FRAMELEDGER_AUDIT_ANCHOR``, default
``$FRAMELEDGER_VAR_DIR/anchors/audit-anchors.log``) and to the ``annotator.audit`` log stream;
publications, freezes, every clean ``verify_integrity`` and every backup (``deploy.backup``,
which also keeps it in ``backup.json``) append the head again, synced to disk.
``verify_integrity`` checks every anchored head by default: each must still be in the chain
with the same hash.

Keep the file where the database's writers cannot rewrite it (another volume, or copied off
the machine with the backups and the log stream): its strength is being out of their reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.utils import timezone

from annotator.base.anchor_log import anchor_line, anchor_path, append_anchor
from annotator.models import AuditEntry


@dataclass(frozen=True)
class Anchor:
    seq: int
    sha256: str
    line: int
    text: str


def chain_head() -> tuple[int, str] | None:
    row = AuditEntry.objects.order_by("-seq").values_list("seq", "sha256").first()
    return (row[0], row[1]) if row else None


def anchor_head(why: str) -> tuple[int, str] | None:
    """Append the current head to the anchor file; the head, or None when there is none
    (or the file cannot be written: logged, never raised, the write it follows is done)."""
    row = AuditEntry.objects.order_by("-seq").values_list("seq", "sha256", "key_id", "signature").first()
    if row is None:
        return None
    if not append_anchor(anchor_line(*row[:2], why, *row[2:]), sync=True):
        return None
    return row[0], row[1]


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
    return list(_read_anchors())


def _read_anchors():
    try:
        handle = anchor_path().open(encoding="utf-8")
    except FileNotFoundError:
        return
    with handle:
        for number, line in enumerate(handle, start=1):
            head = line.split(" ", 1)[0]
            seq, _, sha = head.partition(":")
            if seq.isdigit() and len(sha) == 64:
                yield Anchor(int(seq), sha, number, line.strip())


def first_anchors() -> dict[int, tuple[str, int]]:
    """seq -> (SHA-256, line number) of the first line anchoring each seq, read line by line
    (an anchor after every write: as many lines as entries; only what the check needs is kept)."""
    first: dict[int, tuple[str, int]] = {}
    for anchor in _read_anchors():
        first.setdefault(anchor.seq, (anchor.sha256, anchor.line))
    return first


def anchor_problems(
    first: dict[int, tuple[str, int]] | None = None, stored: dict[int, str] | None = None
) -> list[tuple[str, str]]:
    """(object, message) for every anchored head no longer in the chain as recorded.
    ``first``: ``first_anchors()``, read when not given; ``stored``: seq -> SHA-256 of those
    seqs in the chain, as a pass over the chain collected them (``annotator.reads.chain``;
    one pass over the chain here otherwise)."""
    first = first_anchors() if first is None else first
    if not first:
        return []
    if stored is None:
        stored = {}
        for seq, sha in AuditEntry.objects.order_by("seq").values_list("seq", "sha256").iterator(chunk_size=5000):
            if seq in first:
                stored[seq] = sha
    problems = []
    path = anchor_path()
    for seq, (sha256, line) in sorted(first.items(), key=lambda item: item[1][1]):
        where = f"{path} line {line}"
        found = stored.get(seq)
        if found is None:
            message = f"anchored as a chain head ({where}) and now missing: the chain was cut"
            problems.append((f"audit entry seq {seq}", message))
        elif found != sha256:
            problems.append(
                (f"audit entry seq {seq}", f"its SHA-256 differs from the head anchored in {where}: rewritten")
            )
    return problems
