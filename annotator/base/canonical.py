"""Canonical JSON and hashing: the bytes every frozen object is hashed over."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_bytes(obj: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8 (not ASCII-escaped)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> tuple[str, str]:
    """Return (canonical JSON text, its SHA-256)."""
    data = canonical_bytes(obj)
    return data.decode("utf-8"), sha256_hex(data)
