"""Text encoders behind one small interface.

The deployment decides what turns a request's description into a vector in the
frame-feature space: precomputed query embeddings (the moment_detr ``pooler_output``
layout or an ``.npz`` of ids and vectors), a locally installed model plugged in by a
dotted path, or, for tests and synthetic corpora, :class:`HashTextEncoder`. Nothing
here downloads weights.
"""

from __future__ import annotations

import abc
import hashlib
import importlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np

from retrieval.features import FeatureError, l2_normalize, load_feature_array
from retrieval.fsutil import atomic_writer


class EncoderError(ValueError):
    """A description that the encoder cannot embed, or a bad encoder configuration."""


class TextEncoder(abc.ABC):
    """Turns one request into one vector of length ``dim`` (not necessarily unit)."""

    dim: int

    @abc.abstractmethod
    def encode(self, text: str, *, query_id: str | None = None) -> np.ndarray:
        """Embed a description. ``query_id`` lets precomputed encoders look it up."""

    @abc.abstractmethod
    def spec(self) -> dict:
        """A JSON-able description, stored in the index manifest."""


# --------------------------------------------------------------------------- hashing
_TOKEN_RE = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an the of in on at to and or with is are was were be been his her their its it "
    "this that these those into from by for as then while".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric tokens without stop words."""
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in STOPWORDS]


class HashTextEncoder(TextEncoder):
    """Deterministic stand-in for a CLIP text tower, for tests and synthetic data.

    Every token gets a fixed pseudo-random unit vector derived from SHA-256 of
    ``seed:token`` (its "concept vector"); a description is the sum of its tokens'
    vectors. The synthetic corpus builds frame features from the same vectors, so a
    frame showing the words of a query is similar to the query.
    """

    def __init__(self, dim: int = 512, seed: int = 0) -> None:
        if dim < 2:
            raise EncoderError("dim must be at least 2")
        self.dim = int(dim)
        self.seed = int(seed)
        self._cache: dict[str, np.ndarray] = {}

    def token_vector(self, token: str) -> np.ndarray:
        vec = self._cache.get(token)
        if vec is None:
            digest = hashlib.sha256(f"{self.seed}:{token}".encode()).digest()
            rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
            vec = l2_normalize(rng.standard_normal(self.dim))
            vec.setflags(write=False)
            self._cache[token] = vec
        return vec

    def encode(self, text: str, *, query_id: str | None = None) -> np.ndarray:
        if not isinstance(text, str):
            raise EncoderError("description must be a string")
        tokens = tokenize(text)
        if not tokens:
            raise EncoderError("description has no content words")
        return cast(np.ndarray, np.sum([self.token_vector(t) for t in tokens], axis=0, dtype=np.float32))

    def spec(self) -> dict:
        return {"kind": "hash", "dim": self.dim, "seed": self.seed}


# ----------------------------------------------------------------------- precomputed
class PrecomputedTextEncoder(TextEncoder):
    """Look-up of query embeddings computed elsewhere, by query id (then by text)."""

    def __init__(
        self,
        by_id: Mapping[str, np.ndarray],
        by_text: Mapping[str, np.ndarray] | None = None,
        *,
        source: str | None = None,
    ) -> None:
        vectors = list(by_id.values()) + list((by_text or {}).values())
        if not vectors:
            raise EncoderError("no query embeddings given")
        self.dim = int(np.asarray(vectors[0]).shape[-1])
        self._by_id = {str(k): np.asarray(v, dtype=np.float32).reshape(-1) for k, v in by_id.items()}
        self._by_text = {k: np.asarray(v, dtype=np.float32).reshape(-1) for k, v in (by_text or {}).items()}
        for vec in list(self._by_id.values()) + list(self._by_text.values()):
            if vec.shape != (self.dim,) or not np.all(np.isfinite(vec)):
                raise EncoderError("query embeddings must be finite and of one length")
        self.source = source

    @classmethod
    def from_npz(cls, path: str | os.PathLike) -> PrecomputedTextEncoder:
        """``ids`` (strings) and ``embeddings`` (N x D), optionally ``texts``."""
        try:
            with np.load(path, allow_pickle=False) as data:
                ids = [str(i) for i in data["ids"]]
                emb = np.asarray(data["embeddings"], dtype=np.float32)
                texts = [str(t) for t in data["texts"]] if "texts" in data else []
        except (OSError, KeyError, ValueError) as exc:
            raise EncoderError(f"cannot read query embeddings {path}: {exc}") from exc
        if emb.ndim != 2 or emb.shape[0] != len(ids):
            raise EncoderError("embeddings must be N x D with one id per row")
        by_id = {i: emb[k] for k, i in enumerate(ids) if i}
        by_text = {t: emb[k] for k, t in enumerate(texts) if t}
        return cls(by_id, by_text, source=str(path))

    @classmethod
    def from_moment_detr_dir(cls, directory: str | os.PathLike) -> PrecomputedTextEncoder:
        """A folder of ``qid{N}.npz`` files with ``pooler_output`` (moment_detr layout)."""
        by_id: dict[str, np.ndarray] = {}
        for path in sorted(Path(directory).glob("*.npz")):
            try:
                vec = load_feature_array(path, key="pooler_output")
            except FeatureError as exc:
                raise EncoderError(str(exc)) from exc
            stem = path.stem
            by_id[stem[3:] if stem.startswith("qid") else stem] = vec.reshape(-1)
        return cls(by_id, source=str(directory))

    def encode(self, text: str, *, query_id: str | None = None) -> np.ndarray:
        if query_id is not None:
            key = str(query_id)
            for candidate in (key, key[3:] if key.startswith("qid") else None):
                if candidate is not None and candidate in self._by_id:
                    return self._by_id[candidate]
        if isinstance(text, str) and text in self._by_text:
            return self._by_text[text]
        raise EncoderError(f"no precomputed embedding for query {query_id!r}")

    def spec(self) -> dict:
        return {"kind": "precomputed", "path": self.source}

    def save_npz(self, path: str | os.PathLike) -> None:
        ids = list(self._by_id)
        texts = list(self._by_text)
        emb = np.stack([self._by_id[i] for i in ids] + [self._by_text[t] for t in texts])
        with atomic_writer(path) as fh:
            np.savez(
                fh,
                ids=np.asarray(ids + [""] * len(texts)),
                texts=np.asarray([""] * len(ids) + texts),
                embeddings=emb,
            )


# --------------------------------------------------------------------- plugged models
class CallableTextEncoder(TextEncoder):
    """Adapter for a locally installed model given as ``package.module:factory``.

    The factory is called with ``kwargs`` and must return an object with
    ``encode(texts: list[str]) -> array (n, dim)`` (a CLIP wrapper, say). Weights must
    already be on disk; this class never fetches anything.
    """

    def __init__(self, target: str, kwargs: Mapping[str, object] | None = None) -> None:
        module_name, _, attr = target.partition(":")
        if not module_name or not attr:
            raise EncoderError("a python encoder is given as 'package.module:factory'")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise EncoderError(f"cannot import encoder {target}: {exc}") from exc
        self.target = target
        self.kwargs = dict(kwargs or {})
        self.model = factory(**self.kwargs)
        self.dim = int(getattr(self.model, "dim", 0) or 0)

    def encode(self, text: str, *, query_id: str | None = None) -> np.ndarray:
        if not isinstance(text, str) or not text.strip():
            raise EncoderError("description must be a non-empty string")
        out = np.asarray(self.model.encode([text]), dtype=np.float32)
        return out.reshape(-1)

    def spec(self) -> dict:
        return {"kind": "python", "target": self.target, "kwargs": self.kwargs}


class CachedTextEncoder(TextEncoder):
    """Keeps computed embeddings under ``cache_dir`` (one ``.npy`` per description).

    A cache that cannot be written is skipped silently; the embedding is still returned.
    """

    def __init__(self, inner: TextEncoder, cache_dir: str | os.PathLike) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.cache_dir = Path(cache_dir)
        self._key_prefix = repr(sorted(inner.spec().items())).encode()

    def _path(self, text: str) -> Path:
        digest = hashlib.sha256(self._key_prefix + b"\0" + text.encode()).hexdigest()
        return self.cache_dir / f"{digest}.npy"

    def encode(self, text: str, *, query_id: str | None = None) -> np.ndarray:
        path = self._path(text) if isinstance(text, str) else None
        if path is not None and path.is_file():
            try:
                return np.load(path, allow_pickle=False)
            except (OSError, ValueError):
                pass
        vec = self.inner.encode(text, query_id=query_id)
        if path is not None:
            try:
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                with atomic_writer(path) as fh:
                    np.save(fh, np.asarray(vec, dtype=np.float32))
            except OSError:
                pass
        return vec

    def spec(self) -> dict:
        return self.inner.spec()


def load_encoder(spec: str | Mapping | None, *, base_dir: str | os.PathLike | None = None) -> TextEncoder:
    """Build an encoder from a manifest dict or a command-line string.

    Strings: ``hash`` or ``hash:dim=512,seed=0``; ``precomputed:PATH`` (an ``.npz``
    or a folder of ``qid*.npz``); ``python:package.module:factory``. Relative paths
    are taken from ``base_dir`` (the index folder for a manifest entry).
    """
    if spec is None:
        raise EncoderError("no text encoder configured (use --encoder)")
    if isinstance(spec, str):
        spec = _parse_spec_string(spec)
    kind = spec.get("kind")
    if kind == "hash":
        return HashTextEncoder(dim=int(spec.get("dim", 512)), seed=int(spec.get("seed", 0)))
    if kind == "precomputed":
        path = Path(str(spec.get("path", "")))
        if base_dir is not None and not path.is_absolute():
            path = Path(base_dir) / path
        if path.is_dir():
            return PrecomputedTextEncoder.from_moment_detr_dir(path)
        return PrecomputedTextEncoder.from_npz(path)
    if kind == "python":
        return CallableTextEncoder(str(spec.get("target", "")), spec.get("kwargs") or {})
    raise EncoderError(f"unknown encoder kind {kind!r}")


def _parse_spec_string(text: str) -> dict:
    kind, _, rest = text.partition(":")
    if kind == "hash":
        out: dict[str, object] = {"kind": "hash"}
        for item in filter(None, rest.split(",")):
            key, _, value = item.partition("=")
            if key not in ("dim", "seed") or not value.lstrip("-").isdigit():
                raise EncoderError(f"bad hash encoder option {item!r}")
            out[key] = int(value)
        return out
    if kind == "precomputed" and rest:
        return {"kind": "precomputed", "path": rest}
    if kind == "python" and rest:
        return {"kind": "python", "target": rest}
    raise EncoderError(f"cannot parse encoder {text!r}")


def encode_many(encoder: TextEncoder, texts: Sequence[str], ids: Sequence[str | None]) -> np.ndarray:
    """Embed and normalise several descriptions (training and benchmarks)."""
    rows = [encoder.encode(t, query_id=i) for t, i in zip(texts, ids, strict=True)]
    return l2_normalize(np.stack(rows)) if rows else np.zeros((0, encoder.dim), np.float32)
