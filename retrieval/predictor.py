"""The predictor facade: one object, one device, inference only.

:class:`MomentPredictor` ties an index, a text encoder and (optionally) a trained head
together. The device is resolved once when it is built; every inference method runs
under ``torch.inference_mode()``. A request goes: encode and normalise the
description, score all grid intervals of the video (coarse stage, prefix sums), pass
the best at most 64 to fine scoring, return one legal interval.
"""

from __future__ import annotations

import math
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from retrieval.device import resolve_device
from retrieval.encoders import CachedTextEncoder, PrecomputedTextEncoder, TextEncoder, load_encoder
from retrieval.features import l2_normalize
from retrieval.grid import Grid
from retrieval.head import TemporalHead, load_head
from retrieval.pipeline import Ranking, rank_with_head, rank_zero_shot
from retrieval.scan import DEFAULT_GAMMA, MAX_FINE_CANDIDATES
from retrieval.store import FeatureIndex, UnknownVideoError


@dataclass(frozen=True)
class RetrievalConfig:
    gamma: float = DEFAULT_GAMMA
    fine_candidates: int = MAX_FINE_CANDIDATES
    nms_iou: float | None = None
    block: int | None = None
    use_head: bool = True


@dataclass(frozen=True)
class Prediction:
    video_id: str
    start: float
    end: float
    start_index: int
    end_index: int
    score: float
    method: str  # "zero-shot", "head" or "fallback"
    n_scored: int = 0
    n_candidates: int = 0

    def row(self, query_id: str) -> dict:
        return {"query_id": query_id, "start": self.start, "end": self.end}


def _stderr(msg: str) -> None:
    print(f"retrieval: {msg}", file=sys.stderr)


def fallback_interval(grid: Grid) -> tuple[int, int]:
    """A legal interval for a request that could not be scored: the middle third."""
    a = grid.nearest_index(grid.start + grid.span / 3)
    b = grid.nearest_index(grid.start + 2 * grid.span / 3)
    if b <= a:
        a, b = (a, a + 1) if a + 1 < grid.n_points else (a - 1, a)
    return a, b


class MomentPredictor:
    """Moment retrieval over one index on one device."""

    def __init__(
        self,
        index: FeatureIndex,
        encoder: TextEncoder | None = None,
        *,
        device: str | torch.device = "auto",
        head: TemporalHead | None = None,
        config: RetrievalConfig | None = None,
        video_cache: int = 4,
    ) -> None:
        self.device = resolve_device(device)
        self.index = index
        self.encoder = encoder
        self.config = config or RetrievalConfig()
        self.head = head.to(self.device).eval() if head is not None and self.config.use_head else None
        self._videos: OrderedDict[str, torch.Tensor] = OrderedDict()
        self._video_cache = max(1, video_cache)

    @classmethod
    def from_index_dir(
        cls,
        index_dir: str | os.PathLike,
        *,
        device: str | torch.device = "auto",
        encoder: TextEncoder | str | dict | None = None,
        use_head: bool = True,
        cache_dir: str | os.PathLike | None = None,
        config: RetrievalConfig | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> MomentPredictor:
        """Open an index folder (read-only) with its recorded encoder and head."""
        index = FeatureIndex(index_dir)
        if encoder is None or isinstance(encoder, (str, dict)):
            spec = encoder if encoder is not None else index.manifest.get("encoder")
            encoder = load_encoder(spec, base_dir=index.path) if spec is not None else None
        if encoder is not None and cache_dir is not None and not isinstance(encoder, PrecomputedTextEncoder):
            if encoder.spec().get("kind") == "python":
                encoder = CachedTextEncoder(encoder, cache_dir)
        resolved = resolve_device(device)
        head = None
        cfg = config or RetrievalConfig(use_head=use_head)
        if cfg.use_head and index.head_path is not None:
            try:
                head = load_head(index.head_path, resolved)
            except Exception as exc:  # a broken head must not take retrieval down
                (warn or _stderr)(f"head {index.head_path} unusable ({type(exc).__name__}: {exc}); zero-shot")
        return cls(index, encoder, device=resolved, head=head, config=cfg)

    # ------------------------------------------------------------------ pieces
    def query_vector(self, description: str, *, query_id: str | None = None) -> torch.Tensor:
        if self.encoder is None:
            raise RuntimeError("no text encoder configured")
        vec = self.encoder.encode(description, query_id=query_id)
        vec = np.asarray(vec, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.index.dim or not np.all(np.isfinite(vec)):
            raise ValueError(f"query embedding has dimension {vec.shape[0]}, index has {self.index.dim}")
        return l2_normalize(torch.from_numpy(vec).to(self.device))

    def video_tensor(self, video_id: str) -> torch.Tensor:
        cached = self._videos.get(video_id)
        if cached is not None:
            self._videos.move_to_end(video_id)
            return cached
        tensor = torch.from_numpy(self.index.segment_features(video_id)).to(self.device)
        self._videos[video_id] = tensor
        while len(self._videos) > self._video_cache:
            self._videos.popitem(last=False)
        return tensor

    @torch.inference_mode()
    def rank(self, video_id: str, query: torch.Tensor) -> Ranking:
        """Score every legal interval of the video, fine-score at most 64 of them."""
        grid = self.index.video(video_id).grid
        segments = self.video_tensor(video_id)
        times = torch.from_numpy(np.array(grid.times)).to(self.device)
        cfg = self.config
        if self.head is not None:
            return rank_with_head(
                self.head, segments, query, times, grid.times,
                gamma=cfg.gamma, step=grid.step, k=cfg.fine_candidates, block=cfg.block,
            )  # fmt: skip
        return rank_zero_shot(
            segments, query, times, grid.times,
            gamma=cfg.gamma, step=grid.step, k=cfg.fine_candidates, nms_iou=cfg.nms_iou, block=cfg.block,
        )  # fmt: skip

    # ------------------------------------------------------------------ requests
    @torch.inference_mode()
    def predict(
        self,
        video_id: str,
        description: str = "",
        *,
        query_id: str | None = None,
        embedding: np.ndarray | None = None,
    ) -> Prediction:
        """One legal interval for a request. Raises for an unknown video or bad query."""
        entry = self.index.video(video_id)
        if not entry.features_ok:
            raise ValueError(f"video {video_id!r} has no usable features")
        if embedding is not None:
            query = l2_normalize(torch.as_tensor(np.asarray(embedding, np.float32).reshape(-1)).to(self.device))
        else:
            query = self.query_vector(description, query_id=query_id)
        ranking = self.rank(video_id, query)
        cands, fine = ranking.candidates, ranking.fine
        best = int(np.argmax(fine))
        a, b = int(cands.starts[best]), int(cands.ends[best])
        start, end = entry.grid.interval(a, b)
        return Prediction(
            video_id,
            start,
            end,
            a,
            b,
            float(fine[best]) if math.isfinite(float(fine[best])) else 0.0,
            "head" if self.head is not None else "zero-shot",
            cands.n_scored,
            len(cands),
        )

    def fallback(self, video_id: str) -> Prediction:
        """A legal interval without scoring; raises ``UnknownVideoError`` if no grid."""
        grid = self.index.video(video_id).grid
        a, b = fallback_interval(grid)
        start, end = grid.interval(a, b)
        return Prediction(video_id, start, end, a, b, 0.0, "fallback")


__all__ = ["MomentPredictor", "Prediction", "RetrievalConfig", "UnknownVideoError", "fallback_interval"]
