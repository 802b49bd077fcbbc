"""The silent annotation proxy: the only media an annotator's browser plays.

Recipe (see ``docs/media.md``):

- video stream only (audio, subtitles and data streams are dropped);
- H.264 (libx264) High profile, yuv420p, CRF 20, ``preset=veryfast``;
- a keyframe every ``gop`` frames exactly (``keyint=min-keyint=gop``, no scene-cut
  keyframes) and no B-frames, so decode order is presentation order, DTS = PTS and
  a seek decodes at most ``gop - 1`` frames before the target;
- MP4 with ``+faststart`` (the ``moov`` index first, so the browser can seek before
  the whole file arrives);
- timestamps start at 0: every source frame keeps its own PTS minus the first
  frame's, in a time base that represents the source's exactly, so variable frame
  rate survives and no frame is dropped or duplicated (no ``fps`` filter, ever);
- the display rotation is applied to the pixels, so the proxy, the exact-frame
  images and the thumbnails all stand the same way up without metadata;
- frames larger than ``max_height`` are scaled down (never up), to even sizes.

One-to-one is checked three times: every decoded source frame must carry the PTS
the demuxed table predicts for its position, the encoder must have received exactly
``frame_count`` frames, and the demuxed proxy must have the same count and the same
timestamps (shifted and rescaled exactly).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.frame import PictureType

from annotator.media.errors import FrameMismatch, MediaError, UnsupportedMedia
from annotator.media.frametable import FrameTable, build_frame_table
from annotator.media.probe import ProbeResult

PROXY_GOP = 12
PROXY_CRF = 20
PROXY_PRESET = "veryfast"
PROXY_MAX_HEIGHT = 1080
MAX_TIMESCALE = 2**31 - 1


def proxy_time_base(source: Fraction) -> Fraction:
    """A ``1/N`` time base (what MP4 can store) in which every source tick is whole."""
    if source.denominator <= MAX_TIMESCALE:
        return Fraction(1, source.denominator)
    raise UnsupportedMedia(f"the source time base {source} cannot be represented in MP4")


def proxy_size(width: int, height: int, max_height: int) -> tuple[int, int]:
    if height > max_height:
        width, height = round(width * max_height / height), max_height
    return max(2, width - width % 2), max(2, height - height % 2)


def _x264_options(gop: int, crf: int, preset: str) -> dict[str, str]:
    return {
        "preset": preset,
        "crf": str(crf),
        "profile": "high",
        "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes=0:open-gop=0",
    }


def make_proxy(
    source: str | Path,
    dest: str | Path,
    probed: ProbeResult,
    *,
    gop: int = PROXY_GOP,
    crf: int = PROXY_CRF,
    preset: str = PROXY_PRESET,
    max_height: int = PROXY_MAX_HEIGHT,
    progress: Callable[[float], None] | None = None,
) -> FrameTable:
    """Encode ``source`` into the proxy ``dest``; return the proxy's frame table.

    Raises :class:`FrameMismatch` if any check of one-to-one fails. ``dest`` is left
    in place on failure; the caller owns cleaning up its working directory.
    """
    src_table = probed.table
    src_tb = src_table.time_base
    out_tb = proxy_time_base(src_tb)
    scale = src_tb.numerator  # out ticks per source tick: out_tb = 1/src_tb.denominator
    first_pts = src_table.pts[0]
    turns = probed.rotation // 90
    width, height = proxy_size(*probed.display_size, max_height)

    encoded = 0
    durations: dict[int, int] = {}  # proxy pts -> how long that frame is shown, in proxy ticks
    last_report = time.monotonic()
    with av.open(str(source)) as inp, av.open(str(dest), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        in_stream = inp.streams.video[0]
        in_stream.thread_type = "AUTO"
        stream = out.add_stream("libx264", rate=probed.rate, options=_x264_options(gop, crf, preset))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.time_base = out_tb
        stream.time_base = out_tb
        try:
            for frame in inp.decode(in_stream):
                if encoded >= src_table.frame_count:
                    raise FrameMismatch(f"the decoder produced more frames than the {src_table.frame_count} demuxed")
                expected = src_table.pts[encoded]
                if frame.pts is not None and frame.pts != expected:
                    raise FrameMismatch(
                        f"decoded frame {encoded} has pts {frame.pts} but the demuxed table says {expected}: "
                        "the source is damaged or has frames the decoder cannot show"
                    )
                if turns:
                    rgb = np.ascontiguousarray(np.rot90(frame.to_ndarray(format="rgb24"), turns))
                    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
                out_frame = frame.reformat(width=width, height=height, format="yuv420p")
                out_frame.pts = (expected - first_pts) * scale
                following = src_table.pts[encoded + 1] if encoded + 1 < src_table.frame_count else src_table.end
                durations[out_frame.pts] = (following - expected) * scale
                # The source's I-frames must not force keyframes: the proxy's GOP is its own.
                out_frame.pict_type = PictureType.NONE
                out_frame.time_base = out_tb
                _mux(out, stream.encode(out_frame), durations)
                encoded += 1
                if progress is not None and time.monotonic() - last_report > 0.5:
                    last_report = time.monotonic()
                    progress(encoded / src_table.frame_count)
            _mux(out, stream.encode(None), durations)
        except av.error.FFmpegError as exc:
            raise UnsupportedMedia(f"decoding failed at frame {encoded} ({exc})") from exc
    if encoded != src_table.frame_count:
        raise FrameMismatch(
            f"the source demuxes to {src_table.frame_count} frames but only {encoded} decoded: "
            "the file is truncated or damaged"
        )
    table = replace(build_frame_table(dest), rate=probed.rate)
    check_proxy_table(src_table, table, gop)
    return table


def _mux(out, packets, durations: dict[int, int]) -> None:
    """Mux encoder output, giving each packet its source frame's duration.

    x264 guesses packet durations from the nominal rate; the MP4 muxer takes the last
    sample's length from its packet, so without this the proxy's last frame (and its
    duration) would differ from the source's on variable-rate or rounded timestamps.
    """
    for packet in packets:
        if packet.pts is not None and packet.pts in durations:
            packet.duration = durations.pop(packet.pts)
        out.mux(packet)


def check_proxy_table(src: FrameTable, proxy: FrameTable, gop: int) -> None:
    """The proxy has the source's frames, one to one, with timestamps shifted to 0."""
    if proxy.frame_count != src.frame_count:
        raise FrameMismatch(f"the proxy has {proxy.frame_count} frames, the source {src.frame_count}")
    if proxy.pts[0] != 0:
        raise FrameMismatch(f"the proxy starts at pts {proxy.pts[0]}, not 0")
    # proxy_pts * proxy_tb == (src_pts - first) * src_tb, compared exactly in integers.
    a = proxy.time_base.numerator * src.time_base.denominator
    b = src.time_base.numerator * proxy.time_base.denominator
    first = src.pts[0]
    for i, (p, s) in enumerate(zip(proxy.pts, src.pts, strict=True)):
        if p * a != (s - first) * b:
            raise FrameMismatch(f"proxy frame {i} is at {p} x {proxy.time_base} s, the source frame at {s}")
    if proxy.end * a != (src.end - first) * b:
        raise FrameMismatch("the proxy's last frame does not last as long as the source's")
    expected_keys = tuple(range(0, src.frame_count, gop))
    if proxy.keyframes != expected_keys:
        raise MediaError(f"the proxy's keyframes are not every {gop} frames")
