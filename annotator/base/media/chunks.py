"""Chunked proxy encoding: the encode split at source keyframes, joined by stream copy.

A long source is cut into ranges of the *kept* frames (``annotator.base.media.timeline``)
``[a, b)`` whose starts are multiples of the proxy GOP, so the joined stream has a
keyframe exactly every ``gop`` frames, as a single pass has. Each range is encoded on
its own (any worker sharing ``MEDIA_ROOT``): decoding starts at the source keyframe at
or before frame ``a`` (an earlier one if the seek lands late), frames before ``a`` are
decoded and skipped, and ``b - a`` frames are encoded with the same timestamps and
durations a single pass would give them. Chunks are NUT files (any time base, exact
timestamps); the join copies their packets, in order, into one faststart MP4 with the
timestamps checked tick for tick. The joined proxy's frame table equals the single
pass's (checked by ``check_proxy_table`` and the tests).

Chunk outputs are idempotent: written to ``<name>.<pid>-<random>.part`` and renamed when complete, so
a redelivered chunk (a killed worker) either finds its file and does nothing, or
encodes it again from scratch.
"""

from __future__ import annotations

import json
import os
import secrets
from bisect import bisect_left
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import av

from annotator.base.media.errors import FrameMismatch, MediaError, UnsupportedMedia
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.proxy import ProxyPlan, _Encoder, check_proxy_table

STATE_FILE = "chunks.json"


def plan_chunks(frame_count: int, chunk_frames: int, gop: int) -> list[tuple[int, int]]:
    """``[a, b)`` ranges covering ``0 .. frame_count``; every ``a`` a multiple of ``gop``."""
    size = max(gop, chunk_frames - chunk_frames % gop)
    return [(a, min(a + size, frame_count)) for a in range(0, frame_count, size)]


@dataclass(frozen=True)
class ChunkState:
    """What every chunk task and the join need, written once as JSON in the work dir."""

    source: str
    table: dict  # the source's FrameTable.to_json()
    kept: list[int]  # source pts of the frames the proxy keeps, in order
    dropped: list[list[int]]  # [source index, pts] of frames no decoder produces
    plan: dict  # ProxyPlan fields, fractions as [num, den]
    chunks: list[list[int]]

    def save(self, workdir: Path) -> None:
        tmp = workdir / (STATE_FILE + ".part")
        tmp.write_text(json.dumps(asdict(self), separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, workdir / STATE_FILE)

    @classmethod
    def load(cls, workdir: Path) -> ChunkState:
        return cls(**json.loads((workdir / STATE_FILE).read_text(encoding="utf-8")))

    @property
    def source_table(self) -> FrameTable:
        return FrameTable.from_json(self.table)

    @property
    def proxy_plan(self) -> ProxyPlan:
        fields = dict(self.plan)
        for key in ("source_tb", "out_tb", "rate"):
            fields[key] = Fraction(*fields[key])
        return ProxyPlan(**fields)

    @staticmethod
    def plan_fields(plan: ProxyPlan) -> dict:
        fields = asdict(plan)
        for key in ("source_tb", "out_tb", "rate"):
            fields[key] = [fields[key].numerator, fields[key].denominator]
        return fields

    def kept_table(self) -> FrameTable:
        src = self.source_table
        return FrameTable(time_base=src.time_base, pts=tuple(self.kept), keyframes=(), rate=src.rate, end=src.end)


def prepare_chunks(source: str | Path, workdir: Path, probed, chunk_frames: int, **settings) -> ChunkState | None:
    """Write the chunk state for ``source``; None when it must be encoded in one pass.

    One pass: decode-order timestamps (the decoder's output order is the only truth,
    so a chunk cannot find its first frame) and sources no longer than one chunk.
    Leading frames no decoder produces (an open-GOP cut) are dropped here, as the
    single pass drops them; a frame missing further in fails its chunk.
    """
    from annotator.base.media.proxy import plan_proxy
    from annotator.base.media.timeline import CONTAINER

    table = probed.table
    if probed.timestamps != CONTAINER or probed.first_decoded_pts is None or table.frame_count <= chunk_frames:
        return None
    first = bisect_left(table.pts, probed.first_decoded_pts)
    if first >= table.frame_count or table.pts[first] != probed.first_decoded_pts:
        return None  # the first decoded frame is not in the table: let the single pass say why
    kept = list(table.pts[first:])
    plan = plan_proxy(probed, first_pts=kept[0], **settings)
    state = ChunkState(
        source=str(source),
        table=table.to_json(),
        kept=kept,
        dropped=[[i, table.pts[i]] for i in range(first)],
        plan=ChunkState.plan_fields(plan),
        chunks=[list(r) for r in plan_chunks(len(kept), chunk_frames, plan.gop)],
    )
    state.save(workdir)
    return state


def chunk_path(workdir: Path, index: int) -> Path:
    return workdir / "chunks" / f"{index:05d}.nut"


def encode_chunk(workdir: Path, index: int, progress=None) -> Path:
    """Encode chunk ``index`` of the state in ``workdir``; returns its file. Idempotent."""
    state = ChunkState.load(workdir)
    dest = chunk_path(workdir, index)
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    # A name of this run's own: a duplicate run of the same chunk (a lease handed on while
    # its first owner still ran) never writes into the same file; both rename the same frames.
    part = dest.with_suffix(f".{os.getpid()}-{secrets.token_hex(4)}.part")
    a, b = state.chunks[index]
    src = state.source_table
    kept = state.kept
    end = src.end
    # Decode from the source keyframe at or before frame a; step back if the seek lands late.
    src_index = bisect_left(src.pts, kept[a])
    key_pos = bisect_left(src.keyframes, src_index + 1) - 1
    for attempt in range(4):
        key = src.keyframes[key_pos] if key_pos >= 0 else None
        try:
            _encode_range(state, src, kept, a, b, end, key, part, progress)
            break
        except _SeekLanded:
            if key is None:
                raise FrameMismatch(f"chunk {index}: frame {a} cannot be reached by decoding from the start") from None
            key_pos = key_pos - 1 if attempt < 2 else -1
    os.replace(part, dest)
    return dest


class _SeekLanded(Exception):
    """Decoding after the seek started past the chunk's first frame."""


def _encode_range(state, src: FrameTable, kept, a, b, end, key, part: Path, progress) -> None:
    plan = state.proxy_plan
    encoder = _Encoder(part, plan, fmt="nut")
    ok = False
    try:
        with av.open(state.source) as inp:
            stream = inp.streams.video[0]
            stream.thread_type = "AUTO"
            if key is not None:
                inp.seek(src.pts[key], stream=stream, backward=True, any_frame=False)
            j = a
            pending = None
            for frame in inp.decode(stream):
                if frame.pts is None:
                    raise FrameMismatch("a decoded frame has no timestamp; the source cannot be encoded in chunks")
                if frame.pts < kept[a]:
                    continue
                if j == a and frame.pts > kept[a]:
                    raise _SeekLanded
                if frame.pts != kept[j]:
                    raise FrameMismatch(
                        f"decoded frame {j} has pts {frame.pts} but the table says {kept[j]} (chunk from frame {a})"
                    )
                if pending is not None:
                    encoder.encode(pending, kept[j - 1], kept[j])
                pending = frame
                j += 1
                if progress is not None:
                    progress((j - a) / (b - a))
                if j == b:
                    break
            if j == a and key is not None:
                raise _SeekLanded  # the seek went past every frame of the chunk
            if j < b:
                raise FrameMismatch(f"the chunk from frame {a} ended after {j - a} of {b - a} frames")
            encoder.encode(pending, kept[b - 1], kept[b] if b < len(kept) else end)
        ok = True
    except av.error.FFmpegError as exc:
        raise UnsupportedMedia(f"decoding failed in the chunk from frame {a} ({exc})") from exc
    finally:
        encoder.close(flush=ok)


def missing_chunks(workdir: Path) -> list[int]:
    """The chunks whose files are gone (consumed by an earlier join), by index."""
    state = ChunkState.load(workdir)
    return [index for index in range(len(state.chunks)) if not chunk_path(workdir, index).exists()]


def join_chunks(workdir: Path, dest: Path, progress=None, consumed=None) -> FrameTable:
    """Copy every chunk's packets into one faststart MP4; return its checked frame table.

    ``progress(fraction)``, when given, is called after each chunk (a join's lease is
    renewed through it). ``consumed(index)``, when given, is called once chunk ``index`` is
    copied whole, so the caller can delete its file then (disk: the chunks and the joined
    proxy never both exist whole)."""
    state = ChunkState.load(workdir)
    plan = state.proxy_plan
    kept, end = state.kept, state.source_table.end
    expected = [plan.out_pts(p) for p in kept] + [plan.out_pts(end)]
    n = 0
    with av.open(str(dest), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        stream = None
        extradata = None
        for index in range(len(state.chunks)):
            with av.open(str(chunk_path(workdir, index))) as inp:
                in_stream = inp.streams.video[0]
                if stream is None:
                    stream = out.add_stream_from_template(in_stream)
                    stream.time_base = plan.out_tb
                    extradata = in_stream.codec_context.extradata
                elif in_stream.codec_context.extradata != extradata:
                    raise MediaError(f"chunk {index} was encoded with other parameters than chunk 0")
                for packet in inp.demux(in_stream):
                    if packet.size == 0:
                        continue
                    ticks = packet.pts * packet.time_base / plan.out_tb
                    if n >= len(kept) or ticks != expected[n]:
                        raise FrameMismatch(
                            f"joined frame {n} of chunk {index} is at {ticks}, not {expected[n : n + 1]}"
                        )
                    packet.stream = stream
                    packet.pts = packet.dts = expected[n]
                    packet.duration = expected[n + 1] - expected[n]
                    packet.time_base = plan.out_tb
                    out.mux(packet)
                    n += 1
            if consumed is not None:
                consumed(index)
            if progress is not None:
                progress((index + 1) / len(state.chunks))
    if n != len(kept):
        raise FrameMismatch(f"the chunks hold {n} frames, the source {len(kept)}")
    table = FrameTable(**{**build_frame_table(dest).__dict__, "rate": plan.rate})
    check_proxy_table(state.kept_table(), table, plan.gop)
    return table
