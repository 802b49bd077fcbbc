"""A proxy whose timestamps lie about one frame: the same packets, but frame ``k`` stamped
``shift`` of a frame later (still before frame k+1). The server's frame table keeps the true
time, so a seek to frame k by the midpoint rule lands before the sample's new time and the
element shows frame k-1: the picture is wrong, and a frame check that reads the presented
frame by its own timestamp (Chromium's rVFC) or by its picture (frame_truth.js) says so.
A check that took the frame from the time asked for would call it frame k.
"""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import av


def lie_about_one_frame(path: str | Path, k: int, shift: Fraction = Fraction(3, 4)) -> None:
    """Rewrite the MP4 at ``path`` in place (stream copy), frame ``k``'s pts and dts moved
    ``shift`` of a frame later. Constant rate and no B-frames (the proxy recipe) assumed."""
    path = Path(path)
    lied = path.with_name(path.stem + ".lie.mp4")
    with av.open(str(path)) as inp, av.open(str(lied), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        in_stream = inp.streams.video[0]
        stream = out.add_stream_from_template(in_stream)
        stream.time_base = in_stream.time_base
        packets = [p for p in inp.demux(in_stream) if p.size]
        packets.sort(key=lambda p: p.pts)
        step = packets[1].pts - packets[0].pts
        moved = packets[k].pts + int(step * shift)
        for index, packet in enumerate(packets):
            if index == k:
                packet.pts = moved
                packet.dts = moved
            packet.stream = stream
            out.mux(packet)
    shutil.move(lied, path)
