"""Task-ready export of a ground-truth version: files that drop into a verifier folder.

- ``gt.json``: the ground truth in the format the published verifier reads
  (``json.dumps(indent=2)`` + newline for the action ledger, as published);
- ``vocabulary.json``: the closed vocabulary (for the action ledger: the verbs and
  nouns that occur in the ground truth, which is what the verifier derives);
- ``oracle.json`` (``oracle.jsonl`` for moment queries): a submission scoring 1.0;
- ``adjudication_log.json`` (adjudicated versions): every union item with its decision
  and rationale, as canonical JSON, so that its SHA-256 is the manifest's
  ``adjudication_log_sha256``;
- ``manifest.json``: the version manifest plus SHA-256 and byte length of each file;
- ``signature.json``: an Ed25519 signature over the SHA-256 of ``manifest.json``'s bytes, with
  the key id and the public key (``annotator.base.signing``). ``python -m exportcheck DIR
  --public-key KEY`` checks it offline, without the application (``exportcheck/``).
"""

from __future__ import annotations

import io
import zipfile

from annotator.base import signing
from annotator.base.canonical import canonical_bytes, sha256_hex
from annotator.base.families import adapter_for
from annotator.base.families.base import dumps
from annotator.base.filenames import safe_filename
from annotator.models import GroundTruthVersion
from annotator.reads.documents import version_submission
from annotator.reads.integrity import verified_packet


def export_files(version: GroundTruthVersion) -> dict[str, bytes]:
    packet = verified_packet(version.packet)  # its parameters shape gt.json
    files = adapter_for(packet.task_kind.schema["family"]).export_files(packet, version_submission(version))
    if "adjudication_log" in version.manifest:
        # The bytes the manifest's adjudication_log_sha256 was computed over.
        files["adjudication_log.json"] = canonical_bytes(version.manifest["adjudication_log"])
    manifest = {
        "version": {
            "id": version.pk,
            "tier": version.tier,
            "number": version.number,
            "sha256": version.sha256,
            "created_at": version.created_at.isoformat(),
        },
        "manifest": {k: v for k, v in version.manifest.items() if k != "adjudication_log"},
        "files": {name: {"sha256": sha256_hex(data), "bytes": len(data)} for name, data in sorted(files.items())},
    }
    files["manifest.json"] = dumps(manifest)
    files["signature.json"] = export_signature(files["manifest.json"])
    return files


def export_signature(manifest: bytes) -> bytes:
    """``signature.json``: who signed the manifest (key id, public key) and the signature over
    ``"frameledger export v1\n"`` followed by the hex SHA-256 of ``manifest.json``."""
    digest = sha256_hex(manifest)
    key_id, signature = signing.sign(signing.EXPORT_CONTEXT, digest)
    document = {
        "algorithm": "Ed25519",
        "signed_file": "manifest.json",
        "manifest_sha256": digest,
        "key_id": key_id,
        "public_key": signing.current_public_text(),
        "signature": signature,
    }
    return dumps(document)


def export_zip(version: GroundTruthVersion) -> bytes:
    buffer = io.BytesIO()
    prefix = safe_filename(f"{version.packet.task_kind.slug}-{version.tier}-v{version.number}")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(export_files(version).items()):
            info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()
