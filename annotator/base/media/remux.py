"""A faststart remux (stream copy) of a browser-playable source: frames on screen in seconds.

Not yet wired into ingest (docs/media.md §9): this is the rendition an annotator could
use while the seek-friendly proxy encodes. The source's video packets are copied, not
decoded, into an MP4 with the ``moov`` index first, their timestamps shifted so the first
frame is at 0 in the same ``1/N`` time base the proxy uses, and every packet given its
frame's duration. Its frame table must equal the one the proxy will have (the source's,
shifted to 0; keyframes aside): checked exactly, in integers, like the proxy.

Browser-playable here means what Chromium decodes from MP4 without a transcode: H.264,
VP9 or AV1 in 8-bit 4:2:0, no display rotation (the proxy turns the pixels; a remux would
rely on the browser honouring the matrix), container timestamps a decoder honours
(``timeline`` mode ``container`` with nothing dropped), and not variable frame rate with
B-frames (not frame-exact in Chromium in our measurement, see ``not_browser_playable``).
"""

from __future__ import annotations

from pathlib import Path

import av

from annotator.base.media.errors import MediaError
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.probe import ProbeResult
from annotator.base.media.proxy import check_proxy_table, proxy_time_base
from annotator.base.media.timeline import CONTAINER

PLAYABLE_CODECS = {"h264", "vp9", "av1", "libdav1d", "libvpx-vp9"}
PLAYABLE_PIX_FMTS = {"yuv420p", "yuvj420p"}


def not_browser_playable(source: str | Path, probed: ProbeResult) -> str | None:
    """Why ``source`` cannot be remuxed for the browser, or None when it can."""
    if probed.codec not in PLAYABLE_CODECS:
        return f"{probed.codec} is not H.264, VP9 or AV1"
    if probed.rotation:
        return "the video has a display rotation"
    if probed.timestamps != CONTAINER or probed.first_decoded_pts != probed.table.pts[0]:
        return "the decoder does not honour the container's timestamps"
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        pix_fmt = stream.codec_context.pix_fmt
        if pix_fmt not in PLAYABLE_PIX_FMTS:
            return f"pixel format {pix_fmt} is not 8-bit 4:2:0"
        if not probed.table.is_constant_rate and any(
            p.dts is not None and p.pts != p.dts for p in container.demux(stream) if p.size
        ):
            # Measured: 1 of 144 seeks showed the next frame in Chromium on such a remux
            # (an MP4 edit list over variable frame durations); the proxy has neither.
            return "variable frame rate with reordered (B-) frames"
    return None


def make_remux(source: str | Path, dest: str | Path, probed: ProbeResult) -> FrameTable:
    """Copy the video packets of ``source`` into a faststart MP4; return its checked table."""
    src = probed.table
    out_tb = proxy_time_base(src.time_base)
    scale, first = src.time_base.numerator, src.pts[0]
    following = dict(zip(src.pts, [*src.pts[1:], src.end], strict=True))
    with av.open(str(source)) as inp, av.open(str(dest), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        in_stream = inp.streams.video[0]
        stream = out.add_stream_from_template(in_stream)
        stream.time_base = out_tb
        for packet in inp.demux(in_stream):
            if packet.size == 0 or packet.is_discard:
                continue
            pts = packet.pts
            if pts not in following:
                raise MediaError(f"a packet at {pts} is not in the frame table")
            packet.duration = (following[pts] - pts) * scale
            packet.pts = (pts - first) * scale
            if packet.dts is not None:
                packet.dts = (packet.dts - first) * scale
            packet.time_base = out_tb
            packet.stream = stream
            out.mux(packet)
    table = build_frame_table(dest)
    # The MP4 muxer times the last sample in decode order, so with B-frames or its own
    # timescale the demuxed end can differ from the source's by a fraction of a frame; the
    # table keeps the source's end (the proxy's), and the browser tests show the last frame.
    end = (src.end - first) * src.time_base / table.time_base
    if end.denominator != 1:
        raise MediaError("the remux's time base cannot represent the source's end")
    table = FrameTable(table.time_base, table.pts, table.keyframes, probed.rate, int(end))
    check_proxy_table(src, table, gop=None)
    return table
