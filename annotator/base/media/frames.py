"""Decode exactly frame N of a proxy, seeking by its frame table.

The table gives frame N's PTS and the keyframe at or before it. The decoder seeks to
that keyframe and decodes forward until a frame carries exactly ``pts[N]``; any other
outcome (the target skipped, the file ending first) is an error, never a neighbour.
A :class:`FrameReader` keeps its position, so reading increasing indices within a GOP
(thumbnails, a sequence of exact frames) decodes each frame once.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import av

from annotator.base.media.errors import FrameMismatch, FrameOutOfRange
from annotator.base.media.frametable import FrameTable

IMAGE_FORMATS = {"png": ("PNG", "image/png"), "jpg": ("JPEG", "image/jpeg")}


class FrameReader:
    """Exact-frame access to one video file (use as a context manager)."""

    def __init__(self, path: str | Path, table: FrameTable):
        self.table = table
        self._container = av.open(str(path))
        self._stream = self._container.streams.video[0]
        self._frames: Iterator[av.VideoFrame] | None = None
        self._position = -1  # index of the last frame the decoder returned, -1 if none

    def __enter__(self) -> FrameReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._container.close()

    def _seek_to_keyframe(self, keyframe: int) -> None:
        self._container.seek(self.table.pts[keyframe], stream=self._stream, backward=True, any_frame=False)
        self._frames = self._container.decode(self._stream)
        self._position = keyframe - 1

    def frame(self, index: int) -> av.VideoFrame:
        """The decoded frame ``index`` (0-based, presentation order)."""
        if not 0 <= index < self.table.frame_count:
            raise FrameOutOfRange(f"frame {index} is outside 0..{self.table.frame_count - 1}")
        keyframe = self.table.keyframe_at_or_before(index)
        # Decode forward from where we are when that reaches the target without crossing a
        # keyframe we could have sought to; otherwise seek.
        can_continue = self._frames is not None and keyframe <= self._position + 1 <= index
        if not can_continue:
            self._seek_to_keyframe(keyframe)
        target = self.table.pts[index]
        for frame in self._frames:
            if frame.pts is None:
                raise FrameMismatch("the decoder returned a frame without a timestamp")
            if frame.pts < target:
                continue
            if frame.pts > target:
                self._frames = None
                raise FrameMismatch(
                    f"frame {index} (pts {target}) was not found; the decoder jumped to pts {frame.pts}"
                )
            self._position = index
            return frame
        self._frames = None
        raise FrameMismatch(f"the file ended before frame {index} (pts {target})")


def encode_image(frame: av.VideoFrame, fmt: str = "png") -> bytes:
    """PNG (lossless, what tests read) or JPEG bytes of a decoded frame."""
    pil_format, _ = IMAGE_FORMATS[fmt]
    buffer = io.BytesIO()
    image = frame.to_image()
    if pil_format == "PNG":
        image.save(buffer, format="PNG", compress_level=1)
    else:
        image.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def frame_image(path: str | Path, table: FrameTable, index: int, fmt: str = "png") -> bytes:
    with FrameReader(path, table) as reader:
        return encode_image(reader.frame(index), fmt)
