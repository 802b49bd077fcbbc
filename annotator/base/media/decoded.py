"""The frame table from the decoder's output order, for sources whose container
timestamps cannot be trusted.

Three shapes of real recordings carry video ffmpeg decodes frame by frame, in order,
while their container timestamps cannot time it:

- **restarts**: a DVB recording or a concatenation of captures whose timestamps start
  again mid-file (the decode timestamps go back), so sorting the presentation
  timestamps would interleave the two parts, or two frames share one;
- **repeats**: frames stamped with the same time as the frame before;
- **missing**: packets without a timestamp, such as the first video blocks of a
  Matroska file whose negative timestamps its demuxer cannot place.

For these, probe (``probe.py``) decodes the whole stream once and builds the table here
from the decoder's output order, which *is* the presentation order: frame ``i`` is the
``i``-th decoded frame. Its time is the container's wherever that is usable: each frame
lasts until the next one's timestamp when that is later by at most ``MAX_GAP_SECONDS``
(so variable frame rate and genuine gaps survive); where the timestamps restart, repeat,
go back, leap further or are missing, the frame lasts one nominal frame interval. Leading
frames without a timestamp are placed one interval apart before the first frame that
has one. Every such repair is listed (:func:`repairs_report`) for the ingest report.

The proxy is then encoded in that order (``timeline`` mode ``decoded``: the ``i``-th
decoded frame gets the ``i``-th table time), so its timestamps are this table's.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from annotator.base.media.errors import UnsupportedMedia
from annotator.base.media.frametable import RATE_MAX_DENOMINATOR, FrameTable

# A forward leap longer than this is a discontinuity, not a long frame (ffmpeg's own
# ``dts_delta_threshold`` for transport streams is the same 10 s).
MAX_GAP_SECONDS = 10
# The report lists at most this many repairs one by one (all are counted).
REPAIRS_LISTED = 50


@dataclass(frozen=True)
class Repair:
    """One place where the container's timestamps were not used: ``kind`` is
    ``restart`` (back, or a leap forward), ``repeat`` (the same as the frame before)
    or ``missing``; ``frame`` is the decoded index; ``pts`` the container's (or None)."""

    kind: str
    frame: int
    pts: int | None
    previous: int | None


@dataclass(frozen=True)
class DecodedTable:
    table: FrameTable
    repairs: tuple[Repair, ...]
    reason: str  # why the container's table was not used (shown in the ingest report)


def _nominal_step(stream, time_base: Fraction) -> int:
    """One frame interval in ticks, from the stream's declared rate (25 fps if none)."""
    for candidate in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if candidate and candidate > 0:
            rate = Fraction(candidate).limit_denominator(RATE_MAX_DENOMINATOR)
            return max(1, round(1 / (rate * time_base)))
    return max(1, round(1 / (25 * time_base)))


def retime(stamps: list[int | None], step: int, max_gap: int) -> tuple[list[int], list[Repair]]:
    """Increasing times for frames in output order (see the module docstring).

    A frame takes its container time (shifted by the offset of the last restart) when
    that is later than the frame before by at most ``max_gap``; otherwise it lasts one
    ``step`` after the frame before. A restart re-anchors the container's times there; a
    repeated stamp does not, so frames after a repeat return to their own times.
    """
    first_known = next((i for i, s in enumerate(stamps) if s is not None), len(stamps))
    times: list[int] = []
    repairs: list[Repair] = []
    offset = 0
    for i, stamp in enumerate(stamps):
        previous = stamps[i - 1] if i else None
        if not times:
            times.append(0 if first_known == len(stamps) else stamps[first_known] - first_known * step)
        elif stamp is not None and 0 < stamp + offset - times[-1] <= max_gap:
            times.append(stamp + offset)
            continue
        else:
            times.append(times[-1] + step)
        if stamp is None:
            repairs.append(Repair("missing", i, None, previous))
        elif i:
            kind = "repeat" if stamp == previous else "restart"
            if kind == "restart":
                offset = times[-1] - stamp
            repairs.append(Repair(kind, i, stamp, previous))
    return times, repairs


def decoded_frame_table(path: str | Path, reason: str) -> DecodedTable:
    """Decode every frame of the first video stream of ``path``; time them in output order."""
    try:
        container = av.open(str(path))
    except av.error.FFmpegError as exc:
        raise UnsupportedMedia(f"not a readable video file ({exc.strerror or exc})") from exc
    with container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        time_base = Fraction(stream.time_base) if stream.time_base else Fraction(1, 90000)
        stamps: list[int | None] = []
        keys: list[int] = []
        last_duration = 0
        try:
            for frame in container.decode(stream):
                if frame.key_frame:
                    keys.append(len(stamps))
                stamps.append(frame.pts)
                last_duration = frame.duration or 0
        except av.error.FFmpegError as exc:
            if not stamps:
                raise UnsupportedMedia(f"the video stream cannot be decoded ({exc})") from exc
            raise UnsupportedMedia(f"decoding failed after {len(stamps)} frames ({exc})") from exc
        if not stamps:
            raise UnsupportedMedia("the video stream decodes to no frames")
        step = _nominal_step(stream, time_base)
    times, repairs = retime(stamps, step, max(step, round(MAX_GAP_SECONDS / time_base)))
    end = times[-1] + (last_duration if 0 < last_duration <= 4 * step else step)
    rate = Fraction(1) / (step * time_base)
    if len(times) > 1:
        span = Fraction(times[-1] - times[0]) * time_base
        measured = Fraction(len(times) - 1) / span
        if not all(b - a == step for a, b in zip(times, times[1:], strict=False)):
            rate = measured.limit_denominator(RATE_MAX_DENOMINATOR)
    table = FrameTable(time_base=time_base, pts=tuple(times), keyframes=tuple(keys or [0]), rate=rate, end=end)
    return DecodedTable(table=table, repairs=tuple(repairs), reason=reason)


def repairs_report(decoded: DecodedTable) -> dict:
    """The ingest report's account of a decoded table: why, how many of each kind, where."""
    counts: dict[str, int] = {}
    for repair in decoded.repairs:
        counts[repair.kind] = counts.get(repair.kind, 0) + 1
    tb = decoded.table.time_base
    listed = [
        {
            "kind": r.kind,
            "frame": r.frame,
            "container_pts": r.pts,
            "previous_pts": r.previous,
            "seconds": float(decoded.table.pts[r.frame] * tb),
        }
        for r in decoded.repairs[:REPAIRS_LISTED]
    ]
    return {"reason": decoded.reason, "counts": counts, "count": len(decoded.repairs), "listed": listed}
