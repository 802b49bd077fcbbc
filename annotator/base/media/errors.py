"""Errors the media library raises; their messages are shown to maintainers as is."""

from __future__ import annotations


class MediaError(ValueError):
    """A file cannot be ingested or served; ``str(exc)`` is a sentence for a person."""


class UnsupportedMedia(MediaError):
    """Not a video FFmpeg can read, or a video we will not process (no video stream...)."""


class UntimedMedia(UnsupportedMedia):
    """The container's timestamps cannot time the frames (missing, repeated, restarting);
    the decoder's output order can (``annotator.base.media.decoded``)."""


class FrameMismatch(MediaError):
    """Frames were lost, added or reordered between demux, decode and the proxy."""


class FrameOutOfRange(MediaError):
    """A frame index outside ``0 .. frame_count - 1``."""
