"""Frame features: the one L2 normalisation, loading, and resampling onto a grid.

Both the index build (frame and segment features) and the query path (text
embeddings) normalise through :func:`l2_normalize`; nothing else in the package
normalises vectors.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch

_Array = TypeVar("_Array", np.ndarray, torch.Tensor)

#: Recorded in the index manifest so that a reader knows what the vectors are.
NORMALISATION_ID = "l2-last-axis-float32-eps1e-12"
_EPS = 1e-12


class FeatureError(ValueError):
    """A feature file that cannot be used."""


def l2_normalize(x: _Array, eps: float = _EPS) -> _Array:
    """Scale every vector along the last axis to unit length (float32).

    Accepts a numpy array or a torch tensor and returns the same kind. A zero vector
    stays zero instead of becoming NaN.
    """
    if isinstance(x, torch.Tensor):
        x = x.to(torch.float32)
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        return x / norm.clamp_min(eps)
    arr = np.asarray(x, dtype=np.float32)
    norm = np.linalg.norm(arr, axis=-1, keepdims=True)
    return (arr / np.maximum(norm, eps)).astype(np.float32, copy=False)


def load_feature_array(path: str | os.PathLike, key: str = "features") -> np.ndarray:
    """Read an ``L x D`` float array from ``.npz`` (key ``features``) or ``.npy``.

    Raises :class:`FeatureError` for a missing file, a wrong shape or non-finite values.
    """
    path = Path(path)
    try:
        if path.suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        else:
            with np.load(path, allow_pickle=False) as data:
                if key not in data:
                    raise FeatureError(f"{path.name}: no '{key}' array (has {sorted(data.files)})")
                arr = data[key]
    except FeatureError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise FeatureError(f"{path.name}: cannot read features ({exc})") from exc
    arr = np.asarray(arr)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise FeatureError(f"{path.name}: expected an L x D array, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise FeatureError(f"{path.name}: features must be floating point, got {arr.dtype}")
    arr = arr.astype(np.float32, copy=False)
    if not np.all(np.isfinite(arr)):
        raise FeatureError(f"{path.name}: features contain NaN or infinity")
    return arr


def frame_edges(n_frames: int, duration: float, clip_length: float | None = None) -> np.ndarray:
    """Time span of each feature frame: ``n_frames + 1`` edges.

    With ``clip_length`` frame ``i`` covers ``[i*c, (i+1)*c]`` (the moment_detr and
    Lighthouse convention, the last frame clipped to the duration); without it the
    frames split ``[0, duration]`` evenly.
    """
    if clip_length is not None and clip_length > 0:
        edges = np.arange(n_frames + 1, dtype=np.float64) * float(clip_length)
        if duration > 0 and edges[-1] > duration and edges[-2] < duration:
            edges[-1] = duration
        return edges
    return np.linspace(0.0, float(duration), n_frames + 1)


def resample_to_segments(frames: np.ndarray, edges: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Average of the (normalised) frames over each grid segment, normalised again.

    Frames are treated as piecewise constant over their spans; a segment's value is
    the time-weighted mean of the frames it overlaps (exact, via a cumulative
    integral). The first and last frames are stretched to cover the whole grid.
    Returns ``(len(times) - 1) x D`` float32.
    """
    frames = np.asarray(l2_normalize(frames), dtype=np.float64)
    edges = np.array(edges, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    if edges.size != frames.shape[0] + 1:
        raise FeatureError("need one more edge than frames")
    edges[0] = min(edges[0], times[0])
    edges[-1] = max(edges[-1], times[-1])
    widths = np.diff(edges)
    if np.any(widths <= 0):
        raise FeatureError("frame spans must have positive length")
    cum = np.zeros((frames.shape[0] + 1, frames.shape[1]), dtype=np.float64)
    np.cumsum(frames * widths[:, None], axis=0, out=cum[1:])
    k = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, frames.shape[0] - 1)
    integral = cum[k] + frames[k] * (times - edges[k])[:, None]
    seg = (integral[1:] - integral[:-1]) / np.diff(times)[:, None]
    return l2_normalize(seg)
