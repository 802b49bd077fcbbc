"""Probe a source video: codec, size, rotation, rational frame rate, duration, frames.

The frame count comes from the demuxed frame table, not from container metadata
(``nb_frames`` is absent from Matroska/WebM and wrong in some MP4 files). The first
frame is decoded to prove the decoder works and to read the display rotation.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from annotator.base.media.decoded import decoded_frame_table, repairs_report
from annotator.base.media.errors import UnsupportedMedia, UntimedMedia
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.timeline import CONTAINER, DECODED, PREFIX_FRAMES, timestamp_mode


@dataclass(frozen=True)
class ProbeResult:
    format_name: str
    codec: str
    width: int  # coded size, before rotation
    height: int
    rotation: int  # display rotation, degrees counter-clockwise: 0, 90, 180 or 270
    rate: Fraction
    has_audio: bool
    table: FrameTable
    timestamps: str = CONTAINER  # how decoded frames map to the table (annotator.base.media.timeline)
    bit_rate: int = 0  # bits per second of the video stream (0: unknown)
    first_decoded_pts: int | None = None  # the first frame the decoder produces
    repairs: dict | None = None  # timestamps DECODED: what was repaired (decoded.repairs_report)

    @property
    def frame_count(self) -> int:
        return self.table.frame_count

    @property
    def duration(self) -> float:
        return self.table.duration

    @property
    def start_time(self) -> float:
        return self.table.start_seconds

    @property
    def display_size(self) -> tuple[int, int]:
        return (self.height, self.width) if self.rotation in (90, 270) else (self.width, self.height)


def normalise_rotation(degrees: float | int | None) -> int:
    """Snap a display-matrix angle to 0/90/180/270 (counter-clockwise)."""
    if not degrees:
        return 0
    snapped = int(round(float(degrees) / 90.0)) * 90 % 360
    if abs((float(degrees) - snapped + 180) % 360 - 180) > 1:
        raise UnsupportedMedia(f"display rotation {degrees} degrees is not a multiple of 90")
    return snapped


def probe(path: str | Path) -> ProbeResult:
    repairs = None
    try:
        table = build_frame_table(path)  # raises UnsupportedMedia for unreadable files
    except UntimedMedia as exc:
        # The container cannot time the frames; the decoder's output order can.
        decoded = decoded_frame_table(path, str(exc))
        table, repairs = decoded.table, repairs_report(decoded)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        ctx = stream.codec_context
        prefix = []
        try:
            for frame in container.decode(stream):
                prefix.append(frame)
                if len(prefix) >= PREFIX_FRAMES:
                    break
        except av.error.FFmpegError as exc:
            if not prefix:
                raise UnsupportedMedia(f"the {ctx.name} video stream cannot be decoded ({exc})") from exc
        if not prefix:
            raise UnsupportedMedia(f"the {ctx.name} video stream decodes to no frames")
        first = prefix[0]
        return ProbeResult(
            format_name=container.format.name,
            codec=ctx.name,
            width=first.width,
            height=first.height,
            rotation=normalise_rotation(first.rotation),
            rate=table.rate,
            has_audio=bool(container.streams.audio),
            table=table,
            timestamps=DECODED if repairs is not None else timestamp_mode(prefix).mode,
            repairs=repairs,
            first_decoded_pts=prefix[0].pts,
            bit_rate=_video_bit_rate(path, stream, table),
        )


def _video_bit_rate(path: str | Path, stream, table: FrameTable) -> int:
    """The video stream's bit rate: its own tag, else the file's size over its duration."""
    if stream.bit_rate:
        return int(stream.bit_rate)
    duration = table.duration
    return int(Path(path).stat().st_size * 8 / duration) if duration > 0 else 0
