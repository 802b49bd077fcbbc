"""The silent annotation proxy: the only media an annotator's browser plays.

Recipe (see ``docs/media.md``):

- video stream only (audio, subtitles and data streams are dropped);
- H.264 (libx264) High profile, yuv420p, CRF 23, ``preset=superfast`` (chosen by
  measurement, docs/media.md §3), peak bit rate capped at the source's (or at the
  keyframes' floor where that is higher: ``bitrate_cap_kbps``);
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
- frames taller than ``max_height`` (720: the seek rung of the ladder) are scaled
  down (never up), to even sizes.

One-to-one is checked three times: every decoded source frame must carry the PTS
the demuxed table predicts for its position, the encoder must have received exactly
``frame_count`` frames, and the demuxed proxy must have the same count and the same
timestamps (shifted and rescaled exactly).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.frame import PictureType

from annotator.base.media.errors import FrameMismatch, MediaError, UnsupportedMedia
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.probe import ProbeResult
from annotator.base.media.timeline import FrameAssigner, dropped_report

PROXY_GOP = 12
PROXY_CRF = 23
PROXY_PRESET = "superfast"
PROXY_MAX_HEIGHT = 720
MAX_TIMESCALE = 2**31 - 1
MIN_BITS_PER_PIXEL = 0.035  # the keyframes' floor, measured (bitrate_cap_kbps)
MIN_FLOOR_KBPS = 32


def proxy_time_base(source: Fraction) -> Fraction:
    """A ``1/N`` time base (what MP4 can store) in which every source tick is whole."""
    if source.denominator <= MAX_TIMESCALE:
        return Fraction(1, source.denominator)
    raise UnsupportedMedia(f"the source time base {source} cannot be represented in MP4")


def proxy_size(width: int, height: int, max_height: int) -> tuple[int, int]:
    if height > max_height:
        width, height = round(width * max_height / height), max_height
    return max(2, width - width % 2), max(2, height - height % 2)


def _x264_options(gop: int, crf: int, preset: str, max_kbps: int = 0) -> dict[str, str]:
    params = f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes=0:open-gop=0"
    if max_kbps > 0:
        # Never above the source's bit rate: a VBV cap on top of CRF.
        params += f":vbv-maxrate={max_kbps}:vbv-bufsize={max_kbps}"
    return {"preset": preset, "crf": str(crf), "profile": "high", "x264-params": params}


@dataclass(frozen=True)
class ProxyPlan:
    """Everything an encoder of the proxy (whole or one chunk) needs, picklable."""

    source_tb: Fraction
    out_tb: Fraction
    first_pts: int  # the first kept source frame's pts; the proxy starts there at 0
    rotation: int
    width: int
    height: int
    rate: Fraction
    gop: int
    crf: int
    preset: str
    max_kbps: int

    @property
    def scale(self) -> int:
        """Out ticks per source tick (out_tb = 1 / source_tb.denominator)."""
        return self.source_tb.numerator

    def out_pts(self, source_pts: int) -> int:
        return (source_pts - self.first_pts) * self.scale


def plan_proxy(
    probed: ProbeResult,
    *,
    first_pts: int | None = None,
    gop: int = PROXY_GOP,
    crf: int = PROXY_CRF,
    preset: str = PROXY_PRESET,
    max_height: int = PROXY_MAX_HEIGHT,
) -> ProxyPlan:
    src_tb = probed.table.time_base
    width, height = proxy_size(*probed.display_size, max_height)
    return ProxyPlan(
        source_tb=src_tb,
        out_tb=proxy_time_base(src_tb),
        first_pts=probed.table.pts[0] if first_pts is None else first_pts,
        rotation=probed.rotation,
        width=width,
        height=height,
        rate=probed.rate,
        gop=gop,
        crf=crf,
        preset=preset,
        max_kbps=bitrate_cap_kbps(probed.bit_rate, width, height, probed.rate),
    )


def bitrate_cap_kbps(source_bps: int, width: int, height: int, rate: Fraction) -> int:
    """The proxy's VBV cap: the source's own bit rate, unless that starves the keyframes.

    A keyframe every 12 frames needs bits: below a floor x264 skips blocks and shows the
    previous picture in places, so a frame on screen is not wholly its own. The floor is
    measured (docs/media.md §3) on barcode sources, whose code changes every frame:
    ``MIN_BITS_PER_PIXEL`` (0.035) per displayed pixel and frame, and never below
    ``MIN_FLOOR_KBPS`` (32) for tiny frames. A 1280x720 24 fps textured source kept every
    frame exact at 0.030 and 0.040 bit per pixel (684 and 912 kbit/s) and lost 14-27 of
    600 frames at 0.014-0.025; 160x96 clips needed 19-22 kbit/s. Above the floor the cap is
    the source's rate: the seed's 771 kbit/s 720p match gets 966 kbit/s (1.25x; the old,
    0.1 bit-per-pixel floor gave it 2,796, 3.6x), a 6 Mbit/s 1080p source its own 6 Mbit/s.
    0 = no cap (unknown source rate).
    """
    if source_bps <= 0:
        return 0
    floor = max(width * height * float(rate) * MIN_BITS_PER_PIXEL, MIN_FLOOR_KBPS * 1000)
    return int(max(source_bps, floor) // 1000)


class _Encoder:
    """One libx264 encoder writing ``dest`` (MP4 with faststart, or NUT for a chunk)."""

    def __init__(self, dest: str | Path, plan: ProxyPlan, fmt: str = "mp4"):
        options = {"movflags": "+faststart"} if fmt == "mp4" else {}
        self.out = av.open(str(dest), "w", format=fmt, options=options)
        self.plan = plan
        stream = self.out.add_stream(
            "libx264", rate=plan.rate, options=_x264_options(plan.gop, plan.crf, plan.preset, plan.max_kbps)
        )
        stream.width, stream.height, stream.pix_fmt = plan.width, plan.height, "yuv420p"
        stream.codec_context.time_base = plan.out_tb
        stream.time_base = plan.out_tb
        self.stream = stream
        self.durations: dict[int, int] = {}  # proxy pts -> how long that frame is shown, in proxy ticks

    def encode(self, frame: av.VideoFrame, source_pts: int, following_pts: int) -> None:
        plan = self.plan
        turns = plan.rotation // 90
        if turns:
            rgb = np.ascontiguousarray(np.rot90(frame.to_ndarray(format="rgb24"), turns))
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
        out_frame = frame.reformat(width=plan.width, height=plan.height, format="yuv420p")
        out_frame.pts = plan.out_pts(source_pts)
        self.durations[out_frame.pts] = (following_pts - source_pts) * plan.scale
        # The source's I-frames must not force keyframes: the proxy's GOP is its own.
        out_frame.pict_type = PictureType.NONE
        out_frame.time_base = plan.out_tb
        _mux(self.out, self.stream.encode(out_frame), self.durations)

    def close(self, flush: bool = True) -> None:
        """Finish the file; ``flush=False`` (after an error) abandons it quietly, so the
        error that stopped the encode is the one reported."""
        if flush:
            try:
                _mux(self.out, self.stream.encode(None), self.durations)
            finally:
                self.out.close()
            return
        try:
            self.out.close()
        except (av.error.FFmpegError, OSError):
            pass


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
    report: dict | None = None,
) -> FrameTable:
    """Encode ``source`` into the proxy ``dest`` in one pass; return the proxy's frame table.

    Frames no decoder can produce are dropped and listed in ``report`` (see
    ``annotator.base.media.timeline``). Raises :class:`FrameMismatch` if any check of
    one-to-one fails. ``dest`` is left in place on failure; the caller owns cleaning up
    its working directory.
    """
    src_table = probed.table
    assigner = FrameAssigner(src_table, probed.timestamps)
    settings = {"gop": gop, "crf": crf, "preset": preset, "max_height": max_height}
    encoder = None
    last_report = time.monotonic()
    pending: tuple[av.VideoFrame, int] | None = None  # a frame waits for the next kept pts (its duration)
    try:
        with av.open(str(source)) as inp:
            in_stream = inp.streams.video[0]
            in_stream.thread_type = "AUTO"
            try:
                for frame in inp.decode(in_stream):
                    kept_pts = assigner.assign(frame.pts)
                    if encoder is None:
                        encoder = _Encoder(dest, plan_proxy(probed, first_pts=kept_pts, **settings))
                    if pending is not None:
                        encoder.encode(pending[0], pending[1], kept_pts)
                    pending = (frame, kept_pts)
                    if progress is not None and time.monotonic() - last_report > 0.5:
                        last_report = time.monotonic()
                        progress(len(assigner.kept) / src_table.frame_count)
            except av.error.FFmpegError as exc:
                raise UnsupportedMedia(f"decoding failed at frame {len(assigner.kept)} ({exc})") from exc
        assigner.finish()
        if encoder is None:
            raise FrameMismatch("the source decodes to no frames")
        encoder.encode(pending[0], pending[1], src_table.end)
        encoder.close()
        encoder = None
    finally:
        if encoder is not None:
            encoder.close(flush=False)
    table = replace(build_frame_table(dest), rate=probed.rate)
    check_proxy_table(assigner.kept_table(), table, gop)
    if report is not None:
        report.update(dropped_report(src_table, assigner.dropped, probed.timestamps, probed.repairs))
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


def check_proxy_table(src: FrameTable, proxy: FrameTable, gop: int | None) -> None:
    """The proxy has the source's frames, one to one, with timestamps shifted to 0
    (and, unless ``gop`` is None, a keyframe exactly every ``gop`` frames)."""
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
    if gop is not None and proxy.keyframes != tuple(range(0, src.frame_count, gop)):
        raise MediaError(f"the proxy's keyframes are not every {gop} frames")
