"""A faststart remux (stream copy) of a browser-playable source: frames on screen in seconds.

The rendition an annotator uses while the seek-friendly proxy encodes (docs/media.md
§2.4). The source's video packets are copied, not decoded, into an MP4 with the ``moov``
index first, their timestamps shifted so the first frame is at 0 in the same ``1/N`` time
base the proxy uses, and every packet given its frame's duration. Its frame table must
equal the one the proxy will have (the source's, shifted to 0; keyframes aside): checked
exactly, in integers, like the proxy.

Browser-playable here means what Chromium decodes from MP4 without a transcode: H.264,
VP9 or AV1 in 8-bit 4:2:0, no display rotation (the proxy turns the pixels; a remux would
rely on the browser honouring the matrix), container timestamps a decoder honours
(``timeline`` mode ``container`` with nothing dropped), not variable frame rate with
B-frames (not frame-exact in Chromium in our measurement, see ``not_browser_playable``),
and every frame reachable by a seek: the first frame a keyframe, no open GOP, and
keyframes a decoder can start from (not an intra-refresh stream's recovery points).
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
# How many keyframes ``unreachable_keyframe`` decodes from (one seek and a few frames each).
ENTRY_SAMPLES = 6


def not_browser_playable(source: str | Path, probed: ProbeResult) -> str | None:
    """Why ``source`` cannot be remuxed for the browser, or None when it can."""
    if probed.codec not in PLAYABLE_CODECS:
        return f"{probed.codec} is not H.264, VP9 or AV1"
    if probed.rotation:
        return "the video has a display rotation"
    if probed.timestamps != CONTAINER or probed.first_decoded_pts != probed.table.pts[0]:
        return "the decoder does not honour the container's timestamps"
    if not probed.table.keyframes or probed.table.keyframes[0] != 0:
        # An MP4 trimmed by stream copy (an edit list): its first frames need a keyframe
        # the edit list hides, so no browser can show them from the remux.
        return "the first frame is not a keyframe (the video starts inside a GOP)"
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        pix_fmt = stream.codec_context.pix_fmt
        if pix_fmt not in PLAYABLE_PIX_FMTS:
            return f"pixel format {pix_fmt} is not 8-bit 4:2:0"
        reason = _packet_order_reason(container, stream, probed.table)
    return reason or unreachable_keyframe(source, probed.table)


def _packet_order_reason(container, stream, table: FrameTable) -> str | None:
    """Open GOPs, and variable frame rate with B-frames, from the packets in decode order."""
    reordered = False
    keyframe_pts = None
    for packet in container.demux(stream):
        if packet.size == 0 or packet.is_discard or packet.pts is None:
            continue
        reordered = reordered or (packet.dts is not None and packet.pts != packet.dts)
        if packet.is_keyframe:
            keyframe_pts = packet.pts
        elif keyframe_pts is not None and packet.pts < keyframe_pts and keyframe_pts != table.pts[0]:
            # A frame decoded after a keyframe but shown before it: an open GOP. Its leading
            # frames reference the GOP before, so a seek that starts at this keyframe cannot
            # show them (Chromium: PIPELINE_ERROR_DECODE, and no frame after it).
            return "open GOPs: frames after a keyframe are shown before it"
    if reordered and not table.is_constant_rate:
        # Measured: 1 of 144 seeks showed the next frame in Chromium on such a remux
        # (an MP4 edit list over variable frame durations); the proxy has neither.
        return "variable frame rate with reordered (B-) frames"
    return None


def unreachable_keyframe(source: str | Path, table: FrameTable, samples: int = ENTRY_SAMPLES) -> str | None:
    """A keyframe a decoder cannot start from, among ``samples`` spread over the table.

    A seek lands on a keyframe and decodes from there; the keyframe itself must come out
    first. An x264 intra-refresh stream marks recovery points as keyframes: decoding from
    one shows nothing until the refresh has swept the whole picture, frames later.
    """
    keys = table.keyframes[1:]
    if not keys:
        return None
    picks = sorted({keys[round(k * (len(keys) - 1) / max(1, samples - 1))] for k in range(min(samples, len(keys)))})
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        for key in picks:
            container.seek(table.pts[key], stream=stream, backward=True, any_frame=False)
            first = next((f for f in container.decode(stream) if f.pts is None or f.pts >= table.pts[key]), None)
            if first is None or first.pts != table.pts[key]:
                shown = "nothing" if first is None else f"pts {first.pts}"
                return f"keyframe {key} is no entry point: decoding from it shows {shown} first (intra refresh?)"
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
