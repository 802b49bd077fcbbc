"""A stand-in for a locally installed image-text encoder (``FRAMELEDGER_SEARCH_ENCODER``
in tests): frames and colour words in one 4-d space, one axis per colour of
``tests/scene_video.py``. It loads nothing and downloads nothing."""

from __future__ import annotations

import numpy as np

from tests.scene_video import COLOURS

NAMES = list(COLOURS)
CENTRES = np.array([COLOURS[n] for n in NAMES], dtype=np.float32)


class ToyEncoder:
    dim = len(NAMES)
    frame_size = (32, 18)

    def encode_frames(self, frames: np.ndarray) -> np.ndarray:
        means = frames.reshape(len(frames), -1, 3).astype(np.float32).mean(axis=1)
        distance = np.linalg.norm(means[:, None, :] - CENTRES[None], axis=2)
        return np.exp(-distance / 20.0)

    def encode_text(self, texts: list[str]) -> np.ndarray:
        return np.array([[1.0 if n in t.lower() else 0.0 for n in NAMES] for t in texts], dtype=np.float32) + 1e-3


def make() -> ToyEncoder:
    return ToyEncoder()
