"""Every column of every sealed row changed as an insider with the database would do it in
full: the row changed with the triggers off, whatever hashes cover it recomputed (a version's
manifest, a submission's SHA-256 and size), its seal recomputed and recorded in an audit entry
appended at the chain head, linked and hashed exactly as FrameLedger does, but without the
signing key. Each read answers ``integrity_error`` and ``verify_integrity`` names the row and the
forged entry (``test_sealed_rows`` changes the same columns without the re-sealing)."""

from __future__ import annotations

import pytest

from annotator.base.canonical import canonical_sha256, sha256_hex
from annotator.base.seals import events_seal, row_seal
from annotator.models import GroundTruthVersion, Ledger, Submission
from annotator.reads.integrity import describe
from tests.factories import client_for
from tests.integrity.tampering import forge_entry, tamper, verify
from tests.integrity.test_sealed_rows import COLUMNS, assert_integrity_error, reads

pytestmark = pytest.mark.django_db


def forged_columns(row: str, obj, column: str, value) -> dict:
    """The change, with what a careful forger would change beside it."""
    columns = {"tier": value[0], "number": value[1]} if column == "tier" else {column: value}
    if row in ("adjudicated", "provisional"):
        manifest = {**obj.manifest, "tier": columns.get("tier", obj.tier), "version": columns.get("number", obj.number)}
        columns.update(manifest=manifest, manifest_sha256=canonical_sha256(manifest)[1])
    if row == "submission" and column == "content":
        columns.update(sha256=sha256_hex(value), size_bytes=len(value))
    return columns


def reseal(row: str, obj, packet) -> object:
    """Append the audit entry FrameLedger would have written for ``obj`` as it now stands."""
    obj = type(obj).objects.get(pk=obj.pk)
    if isinstance(obj, Ledger):
        rows = obj.events.order_by("created_at", "id")
        hashes = {"ledger": obj.sha256, "row": row_seal(obj), "events": events_seal(rows)}
        return forge_entry("freeze_ledger", obj, packet_id=packet.pk, hashes=hashes)
    if isinstance(obj, GroundTruthVersion):
        hashes = {"version": obj.sha256, "manifest": obj.manifest_sha256, "row": row_seal(obj)}
        return forge_entry(f"publish_{obj.tier}_version", obj, packet_id=packet.pk, hashes=hashes)
    if isinstance(obj, Submission):
        hashes = {"batch": obj.batch, "submissions": {str(obj.pk): row_seal(obj)}}
        return forge_entry("upload_submissions", obj, packet_id=packet.pk, hashes=hashes)
    if row == "run":
        hashes = {"ground_truth": obj.ground_truth_sha256, "row": row_seal(obj)}
        return forge_entry("finish_scoring_run", obj, packet_id=packet.pk, hashes=hashes)
    if row == "score":
        hashes = {"scores": {str(obj.pk): row_seal(obj)}}
        return forge_entry("score_results", obj.run, packet_id=packet.pk, hashes=hashes)
    return forge_entry("decide_item", obj, packet_id=packet.pk, hashes={"row": row_seal(obj)})


@pytest.mark.parametrize(("row", "column", "value"), COLUMNS, ids=[f"{r}.{c}" for r, c, _ in COLUMNS])
def test_each_column_changed_and_resealed_without_the_key_is_refused_and_named(
    graded, packet, maintainer, row, column, value
):
    obj = graded[row]
    tamper(obj, **forged_columns(row, obj, column, value))
    entry = reseal(row, obj, packet)
    client = client_for(maintainer)
    for url in reads(graded, packet)[row]:
        assert_integrity_error(client, url)
    code, out = verify()
    assert code == 1, out
    fresh = type(obj).objects.get(pk=obj.pk)
    assert f"PROBLEM {describe(fresh)}" in out, out
    assert f"PROBLEM audit entry seq {entry.seq} (id {entry.pk}, {entry.operation}" in out, out
