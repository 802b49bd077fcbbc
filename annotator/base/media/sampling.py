"""Small frames sampled at a steady rate from a video file, for the moment-search index
(``annotator.actions.search``): every ``every`` seconds of presentation time the first
frame at or after that time, scaled to ``size``, as an ``H x W x 3`` uint8 RGB array."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np

from annotator.base.media.errors import MediaError


def sample_frames(path: str | Path, every: float, size: tuple[int, int]) -> Iterator[tuple[float, np.ndarray]]:
    """``(seconds, frame)`` pairs in time order; ``size`` is ``(width, height)``."""
    if every <= 0:
        raise ValueError("every must be positive")
    width, height = size
    try:
        container = av.open(str(path))
    except (av.error.FFmpegError, OSError) as error:
        raise MediaError(f"cannot open the video for sampling: {error}") from None
    with container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        base = float(stream.time_base) if stream.time_base else None
        start = None
        next_time = 0.0
        try:
            for frame in container.decode(stream):
                if frame.pts is None or base is None:
                    continue
                t = frame.pts * base
                start = t if start is None else start
                t -= start
                if t + 1e-9 < next_time:
                    continue
                yield t, frame.to_ndarray(width=width, height=height, format="rgb24")
                next_time = (int(t / every + 1e-9) + 1) * every
        except av.error.FFmpegError as error:
            raise MediaError(f"decoding failed while sampling frames: {error}") from None
