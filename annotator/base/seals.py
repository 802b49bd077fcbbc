"""Row seals: the SHA-256 of a row's own columns, recorded in the audit log when the row is
written and recomputed whenever the row is read or verified.

A seal covers the table, the primary key and every column listed in ``SEALED_COLUMNS``
for the row's model, read from the row itself (not from a stored JSON copy): a column
changed by SQL, a row moved to another packet or run, or a row swapped with another gives
another seal. Large text and byte columns are covered by their SHA-256 (``canonical_json``
by the row's ``sha256`` column, which is sealed; binary columns by a hash taken here).

Pure functions over model instances; no queries (deferred columns must be loaded by the
caller, or reading them costs one query each).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from annotator.base.canonical import canonical_sha256

# The columns (attribute names) each sealed model's seal covers.
SEALED_COLUMNS: dict[str, tuple[str, ...]] = {
    # A frozen ledger: canonical_json is covered by sha256.
    "annotator.Ledger": ("packet_id", "side", "annotator_id", "version", "frozen_at", "attestation", "sha256"),
    # canonical_json by sha256, manifest by manifest_sha256 (both checked on read).
    "annotator.GroundTruthVersion": (
        "packet_id", "tier", "number", "sha256", "manifest_sha256", "changelog", "source", "created_by_id",
        "created_at",
    ),
    # The union a decision rests on: an agreed item's value is published as it stands.
    "annotator.Union": ("packet_id", "ledger_a_sha256", "ledger_b_sha256", "scorer_id", "created_at"),
    "annotator.UnionItem": (
        "union_id", "position", "status", "a_index", "b_index", "a_value", "b_value", "differing_fields",
        "boundary_deltas",
    ),
    "annotator.Decision": ("item_id", "action", "final_value", "rationale", "decided_by_id", "decided_at"),
    # content by sha256 (checked on read whenever the bytes are).
    "annotator.Submission": (
        "packet_id", "label", "original_name", "batch", "sha256", "size_bytes", "rejected_reason",
        "uploaded_by_id", "uploaded_at",
    ),
    "annotator.ScoringRun": (
        "version_id", "scorer_id", "params", "ground_truth_sha256", "scorer_code_sha256", "job_id", "total",
        "created_by_id", "created_at", "finished_at",
    ),
    "annotator.SubmissionScore": (
        "run_id", "submission_id", "version_id", "scorer_id", "status", "reward", "reason", "details",
        "reward_json", "reward_txt", "details_json", "error", "scorer_seconds", "scored_at",
    ),
    # An executable bundle's run once it has ended (done or error): what the leaderboard shows
    # beside the agent's reward (kind, reference flag, outcome, stages). The bundle's bytes by
    # bundle_sha256.
    "annotator.BundleRun": (
        "version_id", "label", "bundle_sha256", "reference", "device", "queue", "limits", "created_by_id",
        "created_at", "status", "outcome", "stages", "enforcement", "submission_id", "score_id", "finished_at",
        "worker", "heartbeat_at",
    ),
    # Derived rows a sealed thing's meaning rests on: the agreement report a maintainer reads
    # about two frozen ledgers, the calibration anchors a readiness mark and a leaderboard's
    # reference rows come from, and the readiness mark that lets a version be graded.
    "annotator.AgreementReport": (
        "packet_id", "scorer_id", "ledger_a_sha256", "ledger_b_sha256", "version_id", "report", "created_by_id",
        "created_at",
    ),
    "annotator.VersionCalibration": (
        "version_id", "scorer_id", "params", "anchors", "status", "problems", "scorer_code_sha256", "computed_at",
    ),
    "annotator.VersionReadiness": ("version_id", "scorer_id", "anchors", "marked_by_id", "marked_at"),
}  # fmt: skip

# The columns of a bundle run fixed when it is submitted (sealed by ``submit_bundle``; the
# worker writes the others while the run is running, then ``finish_bundle_run`` seals them all).
BUNDLE_SUBMIT_COLUMNS = (
    "version_id", "label", "bundle_sha256", "reference", "device", "queue", "limits", "created_by_id", "created_at",
)  # fmt: skip


def plain(value):
    """A column value in the form it has after a round trip through either database."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, memoryview | bytes | bytearray):
        data = bytes(value)
        return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if isinstance(value, dict | list | tuple):
        return json.loads(json.dumps(value))
    return value


def row_seal(obj, names: tuple[str, ...] | None = None) -> str:
    """The seal of ``obj``'s row (see the module docstring); ``names``: these columns only
    (a bundle run's submitted columns), else all of its model's."""
    names = SEALED_COLUMNS[obj._meta.label] if names is None else names
    columns = {name: plain(getattr(obj, name)) for name in names}
    return canonical_sha256({"table": obj._meta.db_table, "id": obj.pk, "columns": columns})[1]


EVENT_COLUMNS = ("id", "uid", "data", "created_at", "updated_at")


def events_seal(events) -> str:
    """The seal of a frozen ledger's event rows (``events`` in the ledger's order): every
    column of each row, so that a uid, an order or a time changed below the ORM gives
    another seal as surely as changed content."""
    return events_seal_of_values([tuple(getattr(event, name) for name in EVENT_COLUMNS) for event in events])


def events_seal_of_values(rows) -> str:
    """``events_seal`` of rows read as ``values_list(*EVENT_COLUMNS)`` (no model instances)."""
    sealed = [dict(zip(EVENT_COLUMNS, map(plain, row), strict=True)) for row in rows]
    for row in sealed:
        row["uid"] = str(row["uid"])
    return canonical_sha256({"table": "annotator_ledgerevent", "rows": sealed})[1]


def bundle_submit_seal(run) -> str:
    """The seal of a bundle run's columns fixed at submission (``BUNDLE_SUBMIT_COLUMNS``)."""
    return row_seal(run, BUNDLE_SUBMIT_COLUMNS)


def union_seal(union, items) -> str:
    """The seal of a union row together with all its items (in position order): an item
    changed, added, removed or moved to another union gives another seal."""
    rows = sorted(items, key=lambda item: item.position)
    return canonical_sha256({"union": row_seal(union), "items": [row_seal(item) for item in rows]})[1]


# Items of a union sealed together (by position): a decision verifies the union row and the
# block of the item it decides, never the whole union (``union_block_seal``).
UNION_BLOCK = 64


def union_block_seal(block: int, items) -> str:
    """The seal of the union items in positions ``block * UNION_BLOCK`` up to the next
    block (``items``: exactly those rows)."""
    rows = sorted(items, key=lambda item: item.position)
    return canonical_sha256({"block": block, "items": [row_seal(item) for item in rows]})[1]


def union_block_seals(items) -> list[str]:
    """The block seals of all the items of a union, in block order."""
    blocks: dict[int, list] = {}
    for item in items:
        blocks.setdefault(item.position // UNION_BLOCK, []).append(item)
    count = max(blocks, default=-1) + 1
    return [union_block_seal(block, blocks.get(block, [])) for block in range(count)]


def union_blocks_seal(union, blocks: list[str], count: int) -> str:
    """The seal of a union row, its item count and its block seals: recorded by
    ``build_union`` (with the block seals) since unions are sealed by blocks."""
    return canonical_sha256({"union": row_seal(union), "count": count, "blocks": blocks})[1]


def is_sealed(obj) -> bool:
    return obj._meta.label in SEALED_COLUMNS


def packet_content(*, title, video, task_kind, instructions: str, parameters: dict) -> dict:
    """What a packet's hash covers: everything an annotator is given. (The parameters are
    hashed under the key ``params``, their name when the first packets were hashed.)"""
    _, schema_sha = canonical_sha256(task_kind.schema)
    return {
        "title": title,
        "video_sha256": video.sha256,
        "frame_count": video.frame_count,
        "frame_rate": [video.frame_rate_num, video.frame_rate_den],
        "task_kind": task_kind.slug,
        "schema_sha256": schema_sha,
        "scorer_id": task_kind.scorer_id,
        "instructions": instructions,
        "params": parameters,
    }
