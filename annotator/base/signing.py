"""The signing key the database does not hold: Ed25519 (pyca/cryptography).

Every audit entry is signed when it is appended (``annotator.models.audit_log``): the
signature covers the entry's SHA-256, which covers its fields, its ``seq`` and the previous
entry's hash, and so every seal the entry records. Someone who can write the database but
cannot read the key can compute hashes and seals as well as FrameLedger can, but cannot make
a signature that verifies: a row changed and "re-sealed" by an appended entry is refused.

Where the key lives (``deploy/settings.py``):

- ``FRAMELEDGER_SIGNING_KEY``: the private key itself, as an environment secret (PEM, or the
  32-byte seed in base64);
- else the file ``FRAMELEDGER_SIGNING_KEY_FILE`` (default ``var/keys/signing-key.pem``, outside
  ``MEDIA_ROOT``), PKCS#8 PEM, mode 0600, made on first use when the audit log is empty
  (``manage.py signing_key --create`` makes it for a log that already has entries).

The public keys by id (``FRAMELEDGER_PUBLIC_KEYS_FILE``, default ``public-keys.json`` beside
the key file) keep every key that ever signed, so that entries stay verifiable after a
rotation (``manage.py signing_key --rotate``), and ``unsigned_through``: the last ``seq``
appended before signing began (0 on an installation that signed from its first entry).
A key id is the first 16 hex digits of the SHA-256 of the raw public key.

Pure code over files and settings; no models, no queries.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# What a signature over an audit entry signs: this prefix and the entry's SHA-256 (hex).
ENTRY_CONTEXT = b"frameledger audit entry v1\n"
# What an export's signature signs: this prefix and the SHA-256 of its manifest file's bytes.
EXPORT_CONTEXT = b"frameledger export v1\n"


class NoSigningKey(ImproperlyConfigured):
    """No signing key is configured and none may be made now."""


@dataclass(frozen=True)
class Keyring:
    """The trusted public keys by id, and the last seq appended before signing began."""

    keys: dict[str, Ed25519PublicKey]
    unsigned_through: int


def raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public: Ed25519PublicKey) -> str:
    return hashlib.sha256(raw_public(public)).hexdigest()[:16]


def public_text(public: Ed25519PublicKey) -> str:
    """The public key as one line of base64 (its 32 raw bytes), as exports and pages show it."""
    return base64.b64encode(raw_public(public)).decode("ascii")


def public_from_text(text: str) -> Ed25519PublicKey:
    """A public key from base64 of its raw bytes, or from a PEM ``PUBLIC KEY`` block."""
    text = text.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_public_key(text.encode("ascii"))
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return key
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))


def key_path() -> Path:
    return Path(settings.FRAMELEDGER_SIGNING_KEY_FILE)


def keyring_path() -> Path:
    configured = getattr(settings, "FRAMELEDGER_PUBLIC_KEYS_FILE", "")
    return Path(configured) if configured else key_path().with_name("public-keys.json")


def _private_from_text(text: str) -> Ed25519PrivateKey:
    text = text.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_private_key(text.encode("ascii"), password=None)
    else:
        key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(text, validate=True))
    if not isinstance(key, Ed25519PrivateKey):
        raise ImproperlyConfigured("the signing key is not an Ed25519 private key")
    return key


def _pem(key: Ed25519PrivateKey) -> bytes:
    pkcs8 = serialization.PrivateFormat.PKCS8
    return key.private_bytes(serialization.Encoding.PEM, pkcs8, serialization.NoEncryption())


def _write_new(path: Path, data: bytes, mode: int) -> bool:
    """Write ``data`` to ``path`` unless it exists (atomically: a link of a full temporary
    file, so a concurrent reader never sees half a key); whether this call made it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    finally:
        temporary.unlink()


def _save_keyring(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def _keyring_document() -> dict:
    try:
        return json.loads(keyring_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"unsigned_through": 0, "keys": {}}
    except (OSError, ValueError) as error:
        raise ImproperlyConfigured(f"the public keys file {keyring_path()} cannot be read: {error}") from error


def _record_public(key: Ed25519PrivateKey, *, unsigned_through: int | None = None) -> None:
    document = _keyring_document()
    public = key.public_key()
    changed = document.setdefault("keys", {}).get(key_id(public)) != public_text(public)
    document["keys"][key_id(public)] = public_text(public)
    if unsigned_through is not None and "unsigned_through" not in document:
        document["unsigned_through"] = unsigned_through
        changed = True
    document.setdefault("unsigned_through", 0)
    if changed:
        _save_keyring(keyring_path(), document)


def make_key(*, head_seq: int) -> bool:
    """Make the key file (and record its public key) unless a key is configured; ``head_seq``:
    the last seq in the audit log now (entries up to it stay unsigned). Whether it made one."""
    if os.environ.get("FRAMELEDGER_SIGNING_KEY") or key_path().exists():
        return False
    key = Ed25519PrivateKey.generate()
    made = _write_new(key_path(), _pem(key), 0o600)
    if made:
        if keyring_path().exists():  # a key file removed: earlier entries stay signed by their keys
            _record_public(key)
        else:
            _record_public(key, unsigned_through=head_seq)
        forget()
    return made


def rotate_key() -> tuple[str, str]:
    """Replace the key file with a new key; the old public key stays in the keyring.
    (old key id, new key id)."""
    if os.environ.get("FRAMELEDGER_SIGNING_KEY"):
        raise ImproperlyConfigured("the signing key comes from FRAMELEDGER_SIGNING_KEY: rotate it there")
    old = private_key()
    _record_public(old)
    new = Ed25519PrivateKey.generate()
    path = key_path()
    temporary = path.with_name(f".{path.name}.{os.getpid()}.rotate")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, _pem(new))
        os.fsync(fd)
    finally:
        os.close(fd)
    _record_public(new)
    os.replace(temporary, path)
    forget()
    return key_id(old.public_key()), key_id(new.public_key())


@lru_cache(maxsize=1)
def private_key() -> Ed25519PrivateKey:
    """The configured private key (environment secret, else the key file)."""
    secret = os.environ.get("FRAMELEDGER_SIGNING_KEY", "")
    if secret:
        return _private_from_text(secret)
    try:
        text = key_path().read_text(encoding="ascii")
    except FileNotFoundError:
        raise NoSigningKey(
            f"no signing key: {key_path()} does not exist and FRAMELEDGER_SIGNING_KEY is not set "
            "(manage.py signing_key --create makes one)"
        ) from None
    except OSError as error:
        raise ImproperlyConfigured(f"the signing key {key_path()} cannot be read: {error}") from error
    return _private_from_text(text)


@lru_cache(maxsize=1)
def keyring() -> Keyring:
    """Every trusted public key by id: the ones recorded in the keyring file and the
    configured key's own."""
    document = _keyring_document()
    keys = {kid: public_from_text(text) for kid, text in document.get("keys", {}).items()}
    try:
        public = private_key().public_key()
        keys[key_id(public)] = public
    except NoSigningKey:
        pass
    return Keyring(keys, int(document.get("unsigned_through", 0)))


def forget() -> None:
    """Read the key and the keyring again on next use (after making or rotating a key)."""
    private_key.cache_clear()
    keyring.cache_clear()
    valid.cache_clear()


def current_key_id() -> str:
    return key_id(private_key().public_key())


def current_public_text() -> str:
    return public_text(private_key().public_key())


def sign(context: bytes, digest: str) -> tuple[str, str]:
    """(key id, signature in hex) of ``context + digest`` with the configured key."""
    key = private_key()
    return key_id(key.public_key()), key.sign(context + digest.encode("ascii")).hex()


@lru_cache(maxsize=65536)
def valid(context: bytes, digest: str, kid: str | None, signature: str | None) -> bool:
    """Whether ``signature`` over ``context + digest`` verifies under the trusted key ``kid``.
    (Cached: the same inputs always give the same answer, and the cache is the process's own.)"""
    return verifies(context, digest, kid, signature)


def verifies(context: bytes, digest: str, kid: str | None, signature: str | None) -> bool:
    """``valid`` without its cache (a pass over the whole chain reads each entry once, and
    holding 65,536 entries' inputs would only cost memory). Safe to call from several
    threads: the verification itself runs without Python's lock."""
    public = keyring().keys.get(kid or "")
    if public is None and kid:  # a key made since this process read the keyring (a rotation)
        keyring.cache_clear()
        public = keyring().keys.get(kid)
    if public is None or not signature:
        return False
    try:
        public.verify(bytes.fromhex(signature), context + digest.encode("ascii"))
    except (InvalidSignature, ValueError):
        return False
    return True
