"""The embedded low-level visual descriptor: one vector per clip of a video, computed
from its decoded frames with numpy alone (no weights, nothing to download).

It is what the web app's search index falls back to when a video has neither uploaded
CLIP features nor a locally installed encoder. It lives in its own space (not CLIP's),
so it supports query-by-example only: "find intervals that look like this one".

Per frame (RGB, any size; the caller decodes small frames, e.g. 64 x 36):

* colour: a joint RGB histogram of 4 x 4 x 4 bins (64 values), as pixel fractions;
* layout: the mean colour of each cell of a 2 x 2 grid (12 values, 0..1);
* texture: a histogram of gradient orientations (8 bins, folded to 0..pi, weighted by
  gradient magnitude) in each cell of the same 2 x 2 grid (32 values), as fractions of
  the frame's total gradient energy, plus the frame's mean gradient magnitude (1 value).

Histograms are square-rooted (the Hellinger map, so that a cosine compares them
sensibly); the 109 values are grouped in four blocks of equal weight (each block scaled
to unit length by ``retrieval.features.l2_normalize``, the package's one normalisation),
so colour does not drown texture. The computation is numpy only. A clip's vector is the mean of its
frames' vectors. Vectors are not normalised here: ``retrieval.features.l2_normalize``
does that for every path.
"""

from __future__ import annotations

import numpy as np

from retrieval.features import l2_normalize

COLOUR_BINS = 4
CELLS = 2
ORIENTATION_BINS = 8
DIM = COLOUR_BINS**3 + CELLS * CELLS * 3 + CELLS * CELLS * ORIENTATION_BINS + 1  # 109
DESCRIPTOR_ID = f"frameledger-lowlevel-v1-{DIM}"


def _cells(image: np.ndarray) -> list[np.ndarray]:
    h, w = image.shape[:2]
    ys = np.linspace(0, h, CELLS + 1).astype(int)
    xs = np.linspace(0, w, CELLS + 1).astype(int)
    return [image[ys[i] : ys[i + 1], xs[j] : xs[j + 1]] for i in range(CELLS) for j in range(CELLS)]


def frame_descriptor(frame: np.ndarray) -> np.ndarray:
    """``DIM`` float32 values for one ``H x W x 3`` uint8 RGB frame (H, W >= 2)."""
    frame = np.asarray(frame)
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.shape[0] < 2 or frame.shape[1] < 2:
        raise ValueError(f"expected an H x W x 3 frame, got shape {frame.shape}")
    rgb = frame.astype(np.float32) / 255.0
    # Colour histogram.
    q = np.minimum((rgb * COLOUR_BINS).astype(np.int64), COLOUR_BINS - 1)
    codes = (q[..., 0] * COLOUR_BINS + q[..., 1]) * COLOUR_BINS + q[..., 2]
    colour = np.bincount(codes.ravel(), minlength=COLOUR_BINS**3).astype(np.float32)
    colour = np.sqrt(colour / codes.size)
    # Layout: mean colour per cell.
    layout = np.concatenate([cell.reshape(-1, 3).mean(axis=0) for cell in _cells(rgb)]).astype(np.float32)
    # Gradient orientation histograms per cell.
    grey = rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    gy, gx = np.gradient(grey)
    magnitude = np.hypot(gx, gy)
    angle = np.mod(np.arctan2(gy, gx), np.pi)
    bins = np.minimum((angle / np.pi * ORIENTATION_BINS).astype(np.int64), ORIENTATION_BINS - 1)
    total = float(magnitude.sum())
    histograms = []
    for cell_bins, cell_mag in zip(_cells(bins), _cells(magnitude), strict=True):
        histograms.append(np.bincount(cell_bins.ravel(), weights=cell_mag.ravel(), minlength=ORIENTATION_BINS))
    texture = np.sqrt(np.concatenate(histograms) / total) if total > 0 else np.zeros(CELLS * CELLS * ORIENTATION_BINS)
    energy = np.array([magnitude.mean()], dtype=np.float32)
    return np.concatenate(
        [l2_normalize(colour), l2_normalize(layout), l2_normalize(texture), np.tanh(energy * 10.0)]
    ).astype(np.float32)


def clip_descriptors(frames: np.ndarray, times: np.ndarray, clip_length: float, duration: float) -> np.ndarray:
    """One vector per clip ``[i * clip_length, (i + 1) * clip_length]`` covering
    ``duration``: the mean descriptor of the frames whose time falls in it. A clip with
    no frame takes the nearest earlier clip's vector (the first clip the next one's).
    ``frames``: ``N x H x W x 3`` uint8; ``times``: ``N`` seconds."""
    if clip_length <= 0 or duration <= 0:
        raise ValueError("clip_length and duration must be positive")
    n_clips = max(1, int(np.ceil(duration / clip_length - 1e-9)))
    frames = np.asarray(frames)
    times = np.asarray(times, dtype=np.float64)
    if len(frames) != len(times) or len(frames) == 0:
        raise ValueError("need at least one frame and one time per frame")
    sums = np.zeros((n_clips, DIM), dtype=np.float64)
    counts = np.zeros(n_clips, dtype=np.int64)
    for frame, t in zip(frames, times, strict=True):
        index = min(n_clips - 1, max(0, int(t // clip_length)))
        sums[index] += frame_descriptor(frame)
        counts[index] += 1
    return fill_gaps(sums, counts)


def fill_gaps(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Means of accumulated clip sums; an empty clip copies its nearest filled neighbour
    (earlier first)."""
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("no frame fell in any clip")
    out = sums / np.maximum(counts, 1)[:, None]
    for index in np.flatnonzero(counts == 0):
        earlier = filled[filled < index]
        source = earlier[-1] if earlier.size else filled[0]
        out[index] = out[source]
    return out.astype(np.float32)
