"""A small test video of flat-coloured scenes with a moving stripe pattern (PyAV,
H.264), for moment search: scenes that look alike are what "find similar" must find."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

COLOURS = {"red": (210, 40, 40), "blue": (40, 60, 210), "green": (40, 190, 60), "yellow": (230, 210, 40)}
# (colour, seconds): red and blue alternate, so red's second scene is "similar" to the first.
SCENES = (("red", 6), ("blue", 6), ("red", 6), ("green", 6), ("blue", 6), ("yellow", 6))


def scene_frame(colour: str, index: int, width: int = 160, height: int = 96) -> np.ndarray:
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = COLOURS[colour]
    shift = index % 8
    image[:, (np.arange(width) + shift) % 16 < 2] = 255  # thin vertical stripes, drifting
    return image


def write_scene_video(path: Path, scenes=SCENES, fps: int = 12) -> tuple[Path, int]:
    """Write the video; returns its path and frame count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 160, 96, "yuv420p"
        stream.options = {"g": str(fps), "bf": "0"}
        for colour, seconds in scenes:
            for _ in range(seconds * fps):
                frame = av.VideoFrame.from_ndarray(scene_frame(colour, count), format="rgb24")
                for packet in stream.encode(frame):
                    container.mux(packet)
                count += 1
        for packet in stream.encode():
            container.mux(packet)
    return path, count
