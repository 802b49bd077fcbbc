"""One audit signing key for every process of an installation (annotator/base/signing.py):
the drills that run several hosts or containers make it once and hand every one the same file,
as the compose file's ``frameledger_signing_key`` secret does."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def shared_signing_key(path: Path, *, owner: int | None = None) -> Path:
    """An Ed25519 private key in PEM at ``path`` (made if missing), readable by its owner only."""
    if not path.exists():
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
    if owner is not None:
        os.chown(path, owner, owner)
    os.chmod(path, 0o400)
    return path
