"""The feature store: corpus records in, a read-only index folder out.

Corpus (the moment-search contract): ``records.jsonl``, one row per video::

    {"video_id": str, "duration": seconds, "grid": [t0, t1, ...] or {"step": s},
     "features": "relative/path.npz", "clip_length": s (optional)}

``features`` is an ``.npz`` with an ``L x D`` array ``features`` (or an ``.npy``),
relative to the records file; without it ``{video_id}.npz`` is looked up next to the
records file and in ``features/`` (the moment_detr layout). Frames split the duration
evenly unless ``clip_length`` says how long each one is.

Index folder (written once by :func:`build_index`, then only read)::

    manifest.json         format, dimension, normalisation id, counts, encoder, head
    videos.jsonl          one row per video: id, duration, grid spec, offset, count
    segments.npy          float16 (total segments x D), L2-normalised, one row per
                          grid segment, videos one after another
    query_embeddings.npz  optional, copied precomputed query embeddings
    head.pt               optional, trained temporal head
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.encoders import load_encoder
from retrieval.features import (
    NORMALISATION_ID,
    FeatureError,
    frame_edges,
    load_feature_array,
    resample_to_segments,
)
from retrieval.fsutil import atomic_writer
from retrieval.grid import Grid, GridError

INDEX_FORMAT = "frameledger-retrieval-index"
INDEX_VERSION = 1
MANIFEST = "manifest.json"
VIDEOS = "videos.jsonl"
SEGMENTS = "segments.npy"
QUERY_EMBEDDINGS = "query_embeddings.npz"
HEAD_CHECKPOINT = "head.pt"


class IndexFormatError(RuntimeError):
    """An index folder that is missing, incomplete or of another format."""


class UnknownVideoError(KeyError):
    """A request names a video that is not in the index."""


@dataclass(frozen=True)
class VideoRecord:
    video_id: str
    duration: float
    grid: Grid
    features_path: Path | None
    clip_length: float | None = None


def resolve_records_path(corpus: str | os.PathLike) -> Path:
    path = Path(corpus)
    return path / "records.jsonl" if path.is_dir() else path


def iter_records(corpus: str | os.PathLike, warn: Callable[[str], None] | None = None) -> Iterator[VideoRecord]:
    """Parse ``records.jsonl``; a bad row is reported through ``warn`` and skipped."""
    records_path = resolve_records_path(corpus)
    base = records_path.parent
    warn = warn or (lambda msg: print(f"retrieval: {msg}", file=sys.stderr))
    with open(records_path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield _parse_record(json.loads(line), base)
            except (ValueError, TypeError, KeyError) as exc:
                warn(f"records.jsonl line {line_no} skipped: {exc}")


def _parse_record(row: object, base: Path) -> VideoRecord:
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    video_id = row.get("video_id", row.get("vid"))
    if not isinstance(video_id, str) or not video_id:
        raise ValueError("missing video_id")
    duration = row.get("duration")
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not math.isfinite(duration):
        raise ValueError(f"{video_id}: duration must be a number")
    if duration <= 0:
        raise ValueError(f"{video_id}: duration must be positive")
    grid = Grid.from_spec(row.get("grid"), float(duration))
    feat = row.get("features")
    path: Path | None = None
    if isinstance(feat, str) and feat:
        path = Path(feat) if os.path.isabs(feat) else base / feat
    else:
        for candidate in (base / f"{video_id}.npz", base / "features" / f"{video_id}.npz"):
            if candidate.is_file():
                path = candidate
                break
    clip = row.get("clip_length")
    clip_length = float(clip) if isinstance(clip, (int, float)) and not isinstance(clip, bool) else None
    return VideoRecord(video_id, float(duration), grid, path, clip_length)


def segment_features_for(record: VideoRecord) -> np.ndarray:
    """Read a record's frame features and resample them onto its grid segments."""
    if record.features_path is None:
        raise FeatureError(f"{record.video_id}: no feature file")
    frames = load_feature_array(record.features_path)
    edges = frame_edges(frames.shape[0], record.duration, record.clip_length)
    return resample_to_segments(frames, edges, record.grid.times)


def _write_json_atomic(path: Path, obj: object) -> None:
    with atomic_writer(path) as fh:
        fh.write((json.dumps(obj, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def _unique_records(corpus: str | os.PathLike, log: Callable[[str], None]) -> list[VideoRecord]:
    records: list[VideoRecord] = []
    seen: set[str] = set()
    for rec in iter_records(corpus, warn=log):
        if rec.video_id in seen:
            log(f"duplicate video_id {rec.video_id!r} skipped")
            continue
        seen.add(rec.video_id)
        records.append(rec)
    return records


def _first_features(records: list[VideoRecord], log: Callable[[str], None]) -> tuple[int, np.ndarray | None]:
    """Index and segment features of the first readable video (it fixes the dimension)."""
    for i, rec in enumerate(records):
        try:
            return i, segment_features_for(rec)
        except FeatureError as exc:
            log(f"{rec.video_id}: {exc}")
    if records:
        raise IndexFormatError("no video in the corpus has readable features")
    return 0, None


def _write_segments(
    index: Path, records: list[VideoRecord], dtype: str, log: Callable[[str], None]
) -> tuple[list[dict], int, int]:
    """Write ``segments.npy`` and return the video rows, the dimension, the failures."""
    first, first_feats = _first_features(records, log)
    dim = first_feats.shape[1] if first_feats is not None else 512
    total = sum(r.grid.n_segments for r in records)
    tmp_segments = index / f".{SEGMENTS}.tmp"
    out = np.lib.format.open_memmap(tmp_segments, mode="w+", dtype=np.dtype(dtype), shape=(total, dim))
    rows, offset, failed = [], 0, 0
    for i, rec in enumerate(records):
        seg = first_feats if i == first else None
        if seg is None and i > first:
            try:
                seg = segment_features_for(rec)
            except FeatureError as exc:
                log(f"{rec.video_id}: {exc}")
        if seg is not None and seg.shape[1] != dim:
            log(f"{rec.video_id}: feature dimension {seg.shape[1]} != {dim}")
            seg = None
        count = rec.grid.n_segments
        out[offset : offset + count] = seg if seg is not None else 0.0
        failed += seg is None
        rows.append(
            {
                "video_id": rec.video_id,
                "duration": rec.duration,
                "grid": rec.grid.to_spec(),
                "offset": offset,
                "count": count,
                "features_ok": seg is not None,
            }
        )
        offset += count
    out.flush()
    del out
    os.replace(tmp_segments, index / SEGMENTS)
    with atomic_writer(index / VIDEOS) as fh:
        fh.write("".join(json.dumps(row) + "\n" for row in rows).encode("utf-8"))
    return rows, dim, failed


def build_index(
    corpus: str | os.PathLike,
    index_dir: str | os.PathLike,
    *,
    encoder_spec: dict | None = None,
    query_embeddings: str | os.PathLike | None = None,
    dtype: str = "float16",
    log: Callable[[str], None] | None = None,
) -> dict:
    """Build the index folder from a corpus and return the manifest.

    Only ``index_dir`` is written (it is created if missing; its parent is never
    touched). A video whose features cannot be read keeps its grid with
    ``features_ok: false`` so that requests about it still get a legal interval.
    """
    log = log or (lambda msg: print(f"retrieval: {msg}", file=sys.stderr))
    started = time.perf_counter()
    index = Path(index_dir)
    index.mkdir(exist_ok=True)
    records = _unique_records(corpus, log)
    rows, dim, failed = _write_segments(index, records, dtype, log)
    query_file = None
    if query_embeddings is not None:
        encoder = load_encoder({"kind": "precomputed", "path": str(query_embeddings)})
        encoder.save_npz(index / QUERY_EMBEDDINGS)  # type: ignore[attr-defined]
        query_file = QUERY_EMBEDDINGS
        encoder_spec = {"kind": "precomputed", "path": QUERY_EMBEDDINGS}
    manifest = {
        "format": INDEX_FORMAT,
        "version": INDEX_VERSION,
        "dim": int(dim),
        "dtype": dtype,
        "normalisation": NORMALISATION_ID,
        "n_videos": len(rows),
        "n_segments": int(sum(r["count"] for r in rows)),
        "n_videos_without_features": failed,
        "encoder": encoder_spec,
        "query_embeddings": query_file,
        "head": None,
        "build_seconds": round(time.perf_counter() - started, 3),
    }
    _write_json_atomic(index / MANIFEST, manifest)
    return manifest


def set_manifest_head(index_dir: str | os.PathLike, head_file: str | None) -> None:
    """Record (or clear) the trained head in the manifest; build-time only."""
    path = Path(index_dir) / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["head"] = head_file
    _write_json_atomic(path, manifest)


@dataclass(frozen=True)
class VideoEntry:
    video_id: str
    duration: float
    grid: Grid
    offset: int
    count: int
    features_ok: bool


class FeatureIndex:
    """Read-only view of an index folder; segment features are memory-mapped."""

    def __init__(self, index_dir: str | os.PathLike) -> None:
        self.path = Path(index_dir)
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{self.path}: not a readable index ({exc})") from exc
        if self.manifest.get("format") != INDEX_FORMAT or self.manifest.get("version") != INDEX_VERSION:
            raise IndexFormatError(f"{self.path}: unsupported index format")
        self.dim = int(self.manifest["dim"])
        self._rows: dict[str, dict] = {}
        with open(self.path / VIDEOS, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    self._rows[row["video_id"]] = row
        self._grids: dict[str, VideoEntry] = {}
        n = int(self.manifest["n_segments"])
        self.segments = (
            np.load(self.path / SEGMENTS, mmap_mode="r", allow_pickle=False)
            if n
            else np.zeros((0, self.dim), np.float16)
        )

    def __contains__(self, video_id: object) -> bool:
        return video_id in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def video_ids(self) -> list[str]:
        return list(self._rows)

    def video(self, video_id: str) -> VideoEntry:
        entry = self._grids.get(video_id)
        if entry is None:
            row = self._rows.get(video_id)
            if row is None:
                raise UnknownVideoError(video_id)
            try:
                grid = Grid.from_spec(row["grid"], row["duration"])
            except GridError as exc:
                raise IndexFormatError(f"{video_id}: bad grid in index ({exc})") from exc
            entry = VideoEntry(
                video_id, float(row["duration"]), grid, int(row["offset"]), int(row["count"]), bool(row["features_ok"])
            )
            self._grids[video_id] = entry
        return entry

    def segment_features(self, video_id: str) -> np.ndarray:
        """``count x D`` float32 copy of a video's normalised segment features."""
        entry = self.video(video_id)
        return np.asarray(self.segments[entry.offset : entry.offset + entry.count], dtype=np.float32)

    @property
    def head_path(self) -> Path | None:
        name = self.manifest.get("head")
        return self.path / name if name else None
