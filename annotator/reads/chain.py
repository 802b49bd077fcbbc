"""One pass over the whole audit chain (``verify_integrity``, the backup's head).

Each entry is checked for its place (``seq`` with no gap, ``prev_sha256`` linking to the
entry before), its fields against its SHA-256, and its Ed25519 signature
(``AuditEntry.signature_problem``, the same rules). At 100,000 entries the signatures are
most of the work (about 100 µs each), so:

- entries are read as plain tuples (``values_list``), a chunk at a time through the
  database's cursor (a server-side cursor on PostgreSQL), never as model instances and never
  all at once;
- the signatures of a chunk are verified in a small thread pool while the next chunk is
  read and hashed (pyca/cryptography verifies without holding Python's lock), with no
  cache (``signing.verifies``: each entry is read once here);
- the heads anchored outside the database (``annotator.reads.anchors``) are looked up in
  the same pass (``keep``), not in a second one.

Memory stays bounded by a few chunks plus the hashes of the entries in ``keep``.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Container
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from annotator.base import signing
from annotator.models import AuditEntry
from annotator.models.audit import EDITED, GENESIS_SHA256, entry_sha256, unsigned_problem

CHUNK = 2000
FIELDS = (
    "pk", "seq", "prev_sha256", "sha256", "at", "actor_id", "operation", "object_type", "object_id", "packet_id",
    "hashes", "details", "key_id", "signature",
)  # fmt: skip


@dataclass
class ChainPass:
    problems: list[tuple[int, int, str, str]] = field(default_factory=list)  # (seq, rank, object, message)
    head: tuple[int, str] = (0, GENESIS_SHA256)
    stored: dict[int, str] = field(default_factory=dict)  # seq -> SHA-256 of the entries in ``keep``
    entries: int = 0

    def sorted_problems(self) -> list[tuple[str, str]]:
        return [(obj, message) for _, _, obj, message in sorted(self.problems)]


def _name(row) -> str:
    pk, seq, operation, object_type, object_id = row[0], row[1], row[6], row[7], row[8]
    return f"audit entry seq {seq} (id {pk}, {operation} {object_type}:{object_id})"


def _signatures(batch: list[tuple[str, str | None, str | None]]) -> list[bool]:
    return [signing.verifies(signing.ENTRY_CONTEXT, sha, kid, sig) for sha, kid, sig in batch]


def chain_pass(keep: Container[int] = ()) -> ChainPass:
    """Check every entry in ``seq`` order (see the module docstring); ``keep``: the seqs
    whose stored SHA-256 the caller wants (the anchored heads)."""
    result = ChainPass()
    signing.keyring()  # read once here, before the threads share it
    workers = max(1, min(4, os.cpu_count() or 1))
    expected_seq, prev = 1, GENESIS_SHA256
    rows = AuditEntry.objects.order_by("seq").values_list(*FIELDS).iterator(chunk_size=CHUNK)
    pending: deque[tuple[list, Future]] = deque()
    with ThreadPoolExecutor(workers, thread_name_prefix="chain-signatures") as pool:
        chunk: list = []
        for row in rows:
            seq, prev_sha, sha = row[1], row[2], row[3]
            result.entries += 1
            if seq != expected_seq:
                missing = f"seq {expected_seq}" + (f"..{seq - 1}" if seq - 1 > expected_seq else "")
                result.problems.append((seq, 0, f"audit entry {missing}", "missing from the chain (deleted)"))
            if prev_sha != prev:
                result.problems.append((seq, 1, _name(row), "does not link to the previous entry's SHA-256"))
            if seq in keep:
                result.stored[seq] = sha
            fields = dict(zip(FIELDS[1:3] + FIELDS[4:12], row[1:3] + row[4:12], strict=True))
            if entry_sha256(**fields) != sha:
                result.problems.append((seq, 2, _name(row), EDITED))
            else:
                chunk.append(row)
            expected_seq, prev = seq + 1, sha
            if len(chunk) >= CHUNK // workers:
                pending.append((chunk, pool.submit(_signatures, [(r[3], r[12], r[13]) for r in chunk])))
                chunk = []
                while len(pending) > 2 * workers:
                    _collect(result, *pending.popleft())
        if chunk:
            pending.append((chunk, pool.submit(_signatures, [(r[3], r[12], r[13]) for r in chunk])))
        while pending:
            _collect(result, *pending.popleft())
    result.head = (expected_seq - 1, prev)
    return result


def _collect(result: ChainPass, chunk: list, verified: Future) -> None:
    for row, ok in zip(chunk, verified.result(), strict=True):
        if not ok and (problem := unsigned_problem(row[1], row[12], row[13], verified=False)) is not None:
            result.problems.append((row[1], 2, _name(row), problem))
