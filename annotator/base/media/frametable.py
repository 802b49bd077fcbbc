"""Per-frame presentation timestamps and keyframes, from packet demux (no decoding).

Demuxing reads only the container's packet headers and payload, so a two-hour file
(~214,000 frames) takes a second or two, where ``ffprobe -show_frames`` decodes every
frame and takes minutes. Every packet of the video stream is one frame (B-frames
included: their packets carry their own presentation timestamp; VP9 hidden alt-ref
frames travel inside the superframe of a shown frame). Packets the demuxer marks
``discard`` (outside an MP4 edit list) are not shown and are left out. Sorting the
packets' PTS gives presentation order; index ``i`` in that order *is* frame ``i``.

The table is the single source of truth for frame <-> time in FrameLedger: the
browser player seeks by it and the exact-frame endpoint decodes by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from annotator.base.media.errors import MediaError, UnsupportedMedia, UntimedMedia

TABLE_VERSION = 2  # 2: compact (run-length deltas); version 1 files (pts lists) still load
# A nominal rate is reported as a fraction with at most this denominator (30000/1001 fits).
RATE_MAX_DENOMINATOR = 1001


@dataclass(frozen=True)
class FrameTable:
    """Frames in presentation order: ``pts[i]`` (ticks of ``time_base``) of frame ``i``."""

    time_base: Fraction
    pts: tuple[int, ...]
    keyframes: tuple[int, ...]
    rate: Fraction
    end: int  # ticks: where the last frame stops being shown (its pts + duration)

    @property
    def frame_count(self) -> int:
        return len(self.pts)

    @property
    def start_seconds(self) -> float:
        return self.seconds(0)

    @property
    def duration(self) -> float:
        """Seconds from the first frame's pts to the end of the last frame."""
        return (self.end - self.pts[0]) * self.time_base.numerator / self.time_base.denominator

    @property
    def is_constant_rate(self) -> bool:
        if len(self.pts) < 3:
            return True
        step = self.pts[1] - self.pts[0]
        return all(b - a == step for a, b in zip(self.pts, self.pts[1:], strict=False))

    @property
    def rate_label(self) -> str:
        """The rate as a person reads it, as the player shows it (``frame_clock.js``
        ``fpsLabel``): ``24``, ``30000/1001 (29.970)``, or for a variable rate the range of
        the rates at least 1 % of the frames have: ``variable, 30–60``."""
        ends = (*self.pts[1:], self.end)
        counts: dict[int, int] = {}
        for a, b in zip(self.pts, ends, strict=True):
            micros = round((b - a) * self.time_base * 1_000_000)
            counts[micros] = counts.get(micros, 0) + 1
        if len(counts) <= 1:
            if self.rate.denominator == 1:
                return str(self.rate.numerator)
            return f"{self.rate.numerator}/{self.rate.denominator} ({float(self.rate):.3f})"
        floor = max(1, -(-self.frame_count // 100))
        common = [m for m, n in counts.items() if n >= floor and m > 0] or [m for m in counts if m > 0]
        lo, hi = format_rate(1e6 / max(common)), format_rate(1e6 / min(common))
        return f"variable, about {lo}" if lo == hi else f"variable, {lo}\u2013{hi}"

    def seconds(self, index: int) -> float:
        """Frame ``index``'s pts in seconds, the double nearest the exact rational."""
        return self.pts[index] * self.time_base.numerator / self.time_base.denominator

    def keyframe_at_or_before(self, index: int) -> int:
        """The index of the last keyframe at or before frame ``index``."""
        from bisect import bisect_right

        pos = bisect_right(self.keyframes, index) - 1
        return self.keyframes[max(pos, 0)]

    def to_json(self) -> dict:
        """What ``frames.json`` serves (version 2, compact; ``docs/media.md`` §1).

        Timestamps as integer ticks of ``time_base``: the first (``pts_start``) and the
        run-length encoded differences (``pts_deltas``: ``[delta, count]`` pairs); the
        keyframe indices the same way. A constant-rate video of any length is a few
        numbers; ``decode_runs`` (and ``frame_clock.js``) expand them exactly.
        """
        num, den = self.time_base.numerator, self.time_base.denominator
        return {
            "version": TABLE_VERSION,
            "fps_num": self.rate.numerator,
            "fps_den": self.rate.denominator,
            "frame_count": self.frame_count,
            "time_base": [num, den],
            "duration": self.duration,
            "end": self.end * num / den,
            "end_ticks": self.end,
            "pts_start": self.pts[0],
            "pts_deltas": encode_runs(self.pts),
            "keyframes_start": self.keyframes[0] if self.keyframes else 0,
            "keyframes_deltas": encode_runs(self.keyframes),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    @classmethod
    def from_json(cls, data: dict) -> FrameTable:
        version = data.get("version")
        if version not in (1, TABLE_VERSION):
            raise MediaError(f"frame table version {version!r} is not one of 1, {TABLE_VERSION}")
        num, den = data["time_base"]
        if version == 1:
            pts, keyframes = tuple(data["pts_ticks"]), tuple(data["keyframes"])
        else:
            pts = decode_runs(data["pts_start"], data["pts_deltas"])
            first_key = data["keyframes_start"]
            keyframes = () if first_key is None else decode_runs(first_key, data["keyframes_deltas"])
        if len(pts) != data["frame_count"]:
            raise MediaError(f"the frame table lists {len(pts)} frames but says frame_count {data['frame_count']}")
        return cls(
            time_base=Fraction(num, den),
            pts=pts,
            keyframes=keyframes,
            rate=Fraction(data["fps_num"], data["fps_den"]),
            end=data["end_ticks"],
        )

    @classmethod
    def load(cls, path: str | Path) -> FrameTable:
        with open(path, encoding="utf-8") as fh:
            return cls.from_json(json.load(fh))


def format_rate(rate: float) -> str:
    """Whole when within 0.01 of a whole number, else two decimals (29.97)."""
    whole = round(rate)
    return str(whole) if abs(rate - whole) < 0.01 else f"{rate:.2f}"


def encode_runs(values) -> list[list[int]]:
    """Differences between consecutive values as ``[delta, count]`` runs."""
    runs: list[list[int]] = []
    for a, b in zip(values, values[1:], strict=False):
        delta = b - a
        if runs and runs[-1][0] == delta:
            runs[-1][1] += 1
        else:
            runs.append([delta, 1])
    return runs


def decode_runs(start: int, runs) -> tuple[int, ...]:
    """The values ``encode_runs`` came from, given the first one."""
    out = [start]
    now = start
    for delta, count in runs:
        for _ in range(count):
            now += delta
            out.append(now)
    return tuple(out)


def nominal_rate(stream: av.video.stream.VideoStream, pts: list[int], time_base: Fraction) -> Fraction:
    """The exact rate when every frame lasts the same, else the container's average rate."""
    if len(pts) >= 2:
        step = pts[1] - pts[0]
        if step > 0 and all(b - a == step for a, b in zip(pts, pts[1:], strict=False)):
            return 1 / (step * time_base)
    for candidate in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if candidate:
            return Fraction(candidate).limit_denominator(RATE_MAX_DENOMINATOR)
    if len(pts) >= 2 and pts[-1] > pts[0]:
        return (Fraction(len(pts) - 1) / ((pts[-1] - pts[0]) * time_base)).limit_denominator(RATE_MAX_DENOMINATOR)
    raise UnsupportedMedia("the video stream has no frame rate and too few frames to measure one")


def build_frame_table(path: str | Path) -> FrameTable:
    """Demux the first video stream of ``path`` and tabulate its frames.

    Raises :class:`UnsupportedMedia` for files FFmpeg cannot open and files without a
    video stream, and its subclass :class:`UntimedMedia` for streams whose packets lack
    or repeat presentation timestamps, or whose decode timestamps go back (a restart):
    probe then times the frames in decoded order (``annotator.base.media.decoded``).
    """
    try:
        container = av.open(str(path))
    except av.error.FFmpegError as exc:
        raise UnsupportedMedia(f"not a readable video file ({exc.strerror or exc})") from exc
    with container:
        if not container.streams.video:
            raise UnsupportedMedia("the file has no video stream")
        stream = container.streams.video[0]
        time_base = Fraction(stream.time_base) if stream.time_base else None
        if not time_base:
            raise UnsupportedMedia("the video stream has no time base")
        entries: list[tuple[int, bool]] = []
        durations: list[int] = []
        last_dts = None
        try:
            for packet in container.demux(stream):
                if packet.size == 0 or packet.is_discard:
                    continue
                if packet.pts is None:
                    raise UntimedMedia(f"video packet {len(entries)} carries no presentation timestamp")
                if packet.dts is not None:
                    if last_dts is not None and packet.dts < last_dts:
                        raise UntimedMedia(
                            f"the timestamps restart at video packet {len(entries)} "
                            f"(decode time {packet.dts} after {last_dts}, x {time_base} s)"
                        )
                    last_dts = packet.dts
                entries.append((packet.pts, packet.is_keyframe))
                durations.append(packet.duration or 0)
        except av.error.FFmpegError as exc:
            raise UnsupportedMedia(f"the file is damaged: demux failed after {len(entries)} frames ({exc})") from exc
        if not entries:
            raise UnsupportedMedia("the video stream has no frames")
        last_duration = durations[entries.index(max(entries))] if durations else 0
        entries.sort()
        pts = [p for p, _ in entries]
        for a, b in zip(pts, pts[1:], strict=False):
            if a == b:
                raise UntimedMedia(f"two frames share the presentation timestamp {a} (x {time_base} s)")
        keyframes = [i for i, (_, key) in enumerate(entries) if key]
        rate = nominal_rate(stream, pts, time_base)
        if last_duration <= 0:
            last_duration = pts[-1] - pts[-2] if len(pts) > 1 else max(1, round(1 / (rate * time_base)))
        return FrameTable(
            time_base=time_base,
            pts=tuple(pts),
            keyframes=tuple(keyframes),
            rate=rate,
            end=pts[-1] + last_duration,
        )
