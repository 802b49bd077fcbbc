"""Which source frames the proxy keeps, and the presentation time each one gets.

The demuxed frame table (``frametable.py``) is right for almost every file. Two kinds
of real recordings carry timestamps a decoder does not honour:

- **open-GOP cuts**: a broadcast transport stream cut by stream copy at a non-IDR
  I-frame starts with B-frames that reference the GOP before the cut. Their packets
  are demuxed (they have timestamps) but no decoder can produce them;
- **decode-order timestamps**: AVI has no presentation timestamps, so the packets of
  an H.264 stream with B-frames carry their *decode* order; sorting them gives the
  right times, but the decoder hands frames back with their packets' (wrong) stamps.

Rather than refusing these files, the proxy is built from decoded frames:

- ``container`` mode (the default): each decoded frame must carry a timestamp of the
  table, in increasing order; table frames the decoder skipped are *dropped* and
  recorded (source index and timestamp). Frames missing at the end are not "dropped":
  that is a truncated file, and the ingest fails;
- ``decode-order`` mode (chosen by :func:`timestamp_mode` when decoded timestamps go
  backwards): the i-th decoded frame gets the i-th sorted table timestamp;
- ``decoded`` mode (chosen by probe when the container's timestamps restart, repeat or
  are missing): the table itself was built from the decoder's output order
  (``decoded.py``), and the i-th decoded frame gets its i-th time, as above.

Every dropped frame is listed in the video's ingest report; nothing else is dropped.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from fractions import Fraction

import av

from annotator.base.media.errors import FrameMismatch
from annotator.base.media.frametable import FrameTable

CONTAINER = "container"
DECODE_ORDER = "decode-order"
# The table itself was built from the decoder's output order (``decoded.py``): the
# container's timestamps restart, repeat or are missing. Assigned like DECODE_ORDER.
DECODED = "decoded"
# How many frames probe decodes to tell the two modes apart (several B-frame groups).
PREFIX_FRAMES = 48


@dataclass(frozen=True)
class DecodedPrefix:
    mode: str
    first_decoded_pts: int | None


def timestamp_mode(frames: list[av.VideoFrame]) -> DecodedPrefix:
    """Choose the mode from the first decoded frames (in output order).

    Timestamps that go backwards (or are missing) in output order are decode-order
    stamps: the output order is the presentation order, the stamps are not.
    """
    seen = [frame.pts for frame in frames]
    stamps = [p for p in seen if p is not None]
    backwards = any(b <= a for a, b in zip(stamps, stamps[1:], strict=False))
    mode = DECODE_ORDER if backwards or len(stamps) < len(seen) else CONTAINER
    return DecodedPrefix(mode, stamps[0] if stamps else None)


@dataclass
class FrameAssigner:
    """Maps decoded frames, in output order, to source table positions.

    ``assign(decoded_pts)`` returns the source timestamp the frame stands for;
    ``finish()`` checks nothing is missing at the end. ``kept`` and ``dropped``
    (``(source index, pts)``) say what happened.
    """

    table: FrameTable
    mode: str = CONTAINER
    start: int = 0  # first source index this assigner covers
    stop: int | None = None  # one past the last (None: the end of the table)
    kept: list[int] = field(default_factory=list)
    dropped: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.i = self.start
        if self.stop is None:
            self.stop = self.table.frame_count

    @property
    def done(self) -> bool:
        return self.i >= self.stop

    def assign(self, decoded_pts: int | None) -> int:
        pts = self.table.pts
        if self.i >= self.stop:
            raise FrameMismatch(f"the decoder produced more frames than the {self.table.frame_count} demuxed")
        if self.mode in (DECODE_ORDER, DECODED) or decoded_pts is None:
            chosen = pts[self.i]
        else:
            expected = pts[self.i]
            if decoded_pts != expected:
                j = bisect_left(pts, decoded_pts, self.i, self.stop)
                if decoded_pts < expected or j >= self.stop or pts[j] != decoded_pts:
                    raise FrameMismatch(
                        f"decoded frame {len(self.kept)} has pts {decoded_pts} but the demuxed table says {expected}: "
                        "the decoder produced a frame the container does not list, or out of order"
                    )
                self.dropped.extend((k, pts[k]) for k in range(self.i, j))
                self.i = j
            chosen = decoded_pts
        self.i += 1
        self.kept.append(chosen)
        return chosen

    def finish(self) -> None:
        if self.i < self.stop:
            raise FrameMismatch(
                f"the source demuxes to {self.stop - self.start} frames but only {self.i - self.start} decoded: "
                "the file is truncated or damaged"
            )

    def kept_table(self) -> FrameTable:
        """The source's table restricted to the kept frames (same time base and end)."""
        return FrameTable(
            time_base=self.table.time_base,
            pts=tuple(self.kept),
            keyframes=(),
            rate=self.table.rate,
            end=self.table.end,
        )


def dropped_report(table: FrameTable, dropped: list[tuple[int, int]], mode: str, repairs: dict | None = None) -> dict:
    """The ingest report's timing part: the mode, every dropped frame exactly, and (mode
    ``decoded``) what the decoded order repaired."""
    tb: Fraction = table.time_base
    extra = {"repaired": repairs} if repairs is not None else {}
    return {
        **extra,
        "timestamps": mode,
        "source_frame_count": table.frame_count,
        "dropped_count": len(dropped),
        "dropped": [
            {"source_index": i, "pts_ticks": p, "time_base": [tb.numerator, tb.denominator], "seconds": float(p * tb)}
            for i, p in dropped
        ],
    }
