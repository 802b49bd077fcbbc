"""Checking a FrameLedger export offline: ``python -m exportcheck DIR --public-key KEY``.

An export (``manage.py export_ground_truth``, or the API's export zip unpacked) is a folder with
``manifest.json`` (the version: packet, tier, number, ground-truth SHA-256, and the SHA-256 and
length of every other file) and ``signature.json`` (an Ed25519 signature over the SHA-256 of
``manifest.json``'s bytes, by the installation's signing key). This checks, with the public key
the installation published (``manage.py signing_key``) and nothing of the application:

- the signature verifies under that key (and the export names that key's id);
- every file the manifest lists (``gt.json`` among them) is there with its SHA-256 and length;

so a benchmark's user can check that a ``gt.json`` is version N (of the tier the manifest says)
of packet P, as the installation holding the key published it.

Only the standard library and pyca/cryptography. Exit status 0 when everything verifies, 1 with
one line per problem otherwise, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

EXPORT_CONTEXT = b"frameledger export v1\n"


def load_public_key(text: str) -> Ed25519PublicKey:
    """A public key as ``manage.py signing_key`` prints it (base64 of 32 bytes), a PEM block,
    or a path to a file holding either."""
    candidate = Path(text)
    if len(text) < 4096 and candidate.is_file():
        text = candidate.read_text(encoding="ascii")
    text = text.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_public_key(text.encode("ascii"))
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return key
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def check(folder: Path, public: Ed25519PublicKey) -> tuple[list[str], dict]:
    """(problems, manifest) of the export in ``folder``."""
    try:
        manifest_bytes = (folder / "manifest.json").read_bytes()
        signature = json.loads((folder / "signature.json").read_text(encoding="utf-8"))
        manifest = json.loads(manifest_bytes)
    except (OSError, ValueError) as error:
        return [f"cannot read the export: {error}"], {}
    problems = []
    digest = hashlib.sha256(manifest_bytes).hexdigest()
    if signature.get("key_id") != key_id(public):
        problems.append(f"signed by key {signature.get('key_id')!r}, not by the given key {key_id(public)}")
    try:
        public.verify(bytes.fromhex(str(signature.get("signature", ""))), EXPORT_CONTEXT + digest.encode("ascii"))
    except (InvalidSignature, ValueError):
        problems.append("manifest.json: the signature does not verify under the given key")
    for name, expected in sorted(manifest.get("files", {}).items()):
        path = folder / name
        if "/" in name or name.startswith(".") or not path.is_file():
            problems.append(f"{name}: listed in the manifest, missing")
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != expected.get("sha256") or len(data) != expected.get("bytes"):
            problems.append(f"{name}: differs from the SHA-256 or length the manifest lists")
    return problems, manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exportcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the export's folder (manifest.json, signature.json, gt.json…)")
    parser.add_argument("--public-key", required=True, help="the installation's public key (base64, PEM or a file)")
    args = parser.parse_args(argv)
    try:
        public = load_public_key(args.public_key)
    except ValueError as error:
        print(f"--public-key: {error}", file=sys.stderr)
        return 2
    problems, manifest = check(args.folder, public)
    for problem in problems:
        print(f"PROBLEM {problem}")
    if problems:
        return 1
    version = manifest.get("manifest", {})
    print(
        f"verified: {version.get('tier')} version {version.get('version')} of packet {version.get('packet')} "
        f"(ground truth SHA-256 {version.get('ground_truth_sha256')}), signed by key {key_id(public)}"
    )
    return 0
