"""Synthetic test videos whose every frame shows its own index as a barcode.

Layout of a frame (any size from 96x64 up; proportions scale):

- a mid-grey background;
- the *data row*: ``BITS`` cells, most significant bit first, white = 1, black = 0;
- the *check row* below it: the bitwise complement of the data row.

A reader samples the centre of every cell (an inset box, so block edges and chroma
bleed from compression do not matter) and accepts a reading only if every check cell
is the complement of its data cell. An unreadable or torn frame therefore gives
``None``, never a plausible wrong number. ``BITS = 18`` covers 262,143 frames, more
than a two-hour 29.97 fps match (214,363 frames).

The same geometry is exported (:func:`cell_boxes`) so a browser test can sample a
canvas in JavaScript and hand the cell means back to :func:`decode_cell_means`.

:data:`ENCODINGS` names the encodings the tests and the demo data use; they cover the
cases that break naive players: 24 fps H.264 with B-frames and GOP 250, 29.97
(30000/1001) GOP 12, variable frame rate with B-frames, VP9 in WebM (millisecond
timestamps, hidden alt-ref frames), a stream whose timestamps start at 1.5 s, and a
phone-style clip with a 90 degree display rotation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

BITS = 18
MAX_INDEX = (1 << BITS) - 1
BACKGROUND = 128
# Cell luma threshold and the minimum contrast between a data cell and its check cell.
THRESHOLD = 128
MIN_CONTRAST = 60


class BarcodeOverflow(ValueError):
    """The frame index does not fit in the barcode."""


def _geometry(width: int, height: int) -> tuple[int, int, int, int, int]:
    """(x0, cell_width, data_y0, check_y0, row_height) for a frame size."""
    cell_w = max(2, (width * 9 // 10) // BITS)
    x0 = (width - cell_w * BITS) // 2
    row_h = max(4, height * 3 // 10)
    data_y0 = height // 20
    check_y0 = data_y0 + row_h + max(2, height // 20)
    if check_y0 + row_h > height:
        raise ValueError(f"frame {width}x{height} is too small for the barcode")
    return x0, cell_w, data_y0, check_y0, row_h


def cell_boxes(width: int, height: int) -> list[tuple[int, int, int, int]]:
    """Sampling boxes (x, y, w, h) of the data cells then the check cells, MSB first.

    Each box is the centre half of its cell, away from edges that compression blurs.
    """
    x0, cell_w, data_y0, check_y0, row_h = _geometry(width, height)
    inset_x, inset_y = cell_w // 4, row_h // 4
    boxes = []
    for y0 in (data_y0, check_y0):
        for bit in range(BITS):
            x = x0 + bit * cell_w + inset_x
            boxes.append((x, y0 + inset_y, max(1, cell_w - 2 * inset_x), max(1, row_h - 2 * inset_y)))
    return boxes


def _bits_of(index: int) -> list[int]:
    if not 0 <= index <= MAX_INDEX:
        raise BarcodeOverflow(f"frame index {index} does not fit in {BITS} bits")
    return [(index >> (BITS - 1 - i)) & 1 for i in range(BITS)]


def texture(width: int, height: int, seed: int = 7) -> np.ndarray:
    """A smooth random RGB texture (twice the frame width, to scroll through)."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(40, 216, size=(height // 8 + 1, width // 4 + 1, 3), dtype=np.uint8)
    return np.repeat(np.repeat(coarse, 8, axis=0), 8, axis=1)[:height, : 2 * width]


def render_frame(index: int, width: int = 160, height: int = 96, background: np.ndarray | None = None) -> np.ndarray:
    """An RGB frame (height x width x 3, uint8) showing ``index`` as a barcode.

    ``background`` (from :func:`texture`) scrolls one pixel a frame behind the code, so
    an encoder has real motion and detail to code (benchmarks); default: flat grey.
    """
    x0, cell_w, data_y0, check_y0, row_h = _geometry(width, height)
    if background is None:
        img = np.full((height, width, 3), BACKGROUND, dtype=np.uint8)
    else:
        shift = index % width
        img = np.ascontiguousarray(background[:, shift : shift + width])
    for i, bit in enumerate(_bits_of(index)):
        xs = slice(x0 + i * cell_w, x0 + (i + 1) * cell_w)
        img[data_y0 : data_y0 + row_h, xs] = 255 if bit else 0
        img[check_y0 : check_y0 + row_h, xs] = 0 if bit else 255
    # A small marker that moves every frame, so encoders see motion outside the code.
    marker_x = (index * 3) % max(1, width - 4)
    img[height - 4 :, marker_x : marker_x + 4] = (255, 64, 64)
    return img


def decode_cell_means(means: Sequence[float]) -> int | None:
    """Frame index from the mean luma of each sampling box (data cells then check cells).

    Returns ``None`` when any check cell disagrees with its data cell.
    """
    if len(means) != 2 * BITS:
        raise ValueError(f"expected {2 * BITS} cell means, got {len(means)}")
    value = 0
    for data, check in zip(means[:BITS], means[BITS:], strict=True):
        if abs(data - check) < MIN_CONTRAST:
            return None
        bit = 1 if data > THRESHOLD else 0
        if (1 if check > THRESHOLD else 0) == bit:
            return None
        value = (value << 1) | bit
    return value


def luma(rgb: np.ndarray) -> np.ndarray:
    rgb = rgb.astype(np.float32)
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


def read_barcode(rgb: np.ndarray) -> int | None:
    """The index shown by a decoded RGB frame, or ``None`` if it cannot be read."""
    height, width = rgb.shape[:2]
    y = luma(rgb)
    means = [float(y[by : by + bh, bx : bx + bw].mean()) for bx, by, bw, bh in cell_boxes(width, height)]
    return decode_cell_means(means)


@dataclass(frozen=True)
class Encoding:
    """How to write one synthetic video.

    ``durations`` (in ``time_base`` ticks) cycles to give variable frame rate; when it
    is empty, every frame lasts one tick of ``1 / rate`` (constant frame rate).
    """

    name: str
    container: str
    suffix: str
    codec: str
    rate: Fraction
    gop: int
    bframes: int = 0
    time_base: Fraction | None = None
    start_ticks: int = 0
    durations: tuple[int, ...] = ()
    rotation: int = 0  # display rotation, degrees counter-clockwise (as PyAV reports it)
    options: dict[str, str] = field(default_factory=dict)
    mux_options: dict[str, str] = field(default_factory=dict)  # the container's (muxer) options

    @property
    def tick(self) -> Fraction:
        return self.time_base or 1 / self.rate

    def frame_pts(self, count: int) -> list[int]:
        """Presentation timestamps of ``count`` frames, in ``tick`` units."""
        if not self.durations:
            step = int((1 / self.rate) / self.tick)
            return [self.start_ticks + i * step for i in range(count)]
        pts, now = [], self.start_ticks
        for i in range(count):
            pts.append(now)
            now += self.durations[i % len(self.durations)]
        return pts


def _x264(gop: int, bframes: int) -> dict[str, str]:
    return {
        "preset": "veryfast",
        "crf": "18",
        "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes={bframes}:b-adapt=0",
    }


ENCODINGS: dict[str, Encoding] = {
    e.name: e
    for e in (
        Encoding("h264-24-gop250", "mp4", ".mp4", "libx264", Fraction(24), gop=250, bframes=3, options=_x264(250, 3)),
        Encoding("h264-2997-gop12", "mp4", ".mp4", "libx264", Fraction(30000, 1001), gop=12, options=_x264(12, 0)),
        Encoding(
            "h264-vfr-bframes",
            "mp4",
            ".mp4",
            "libx264",
            Fraction(30),
            gop=48,
            bframes=2,
            time_base=Fraction(1, 90000),
            # 1/30, 1/24, 1/60, 1/15, 1/29.97 s: a realistic mix after a phone's frame drops.
            durations=(3000, 3750, 1500, 6000, 3003, 3000, 3000),
            options=_x264(48, 2),
        ),
        Encoding(
            "vp9-webm",
            "webm",
            ".webm",
            "libvpx-vp9",
            Fraction(30),
            gop=60,
            options={"deadline": "good", "cpu-used": "5", "crf": "20", "b:v": "0", "g": "60", "auto-alt-ref": "1"},
        ),
        Encoding(
            "h264-offset-1.5s",
            "matroska",
            ".mkv",
            "libx264",
            Fraction(25),
            gop=50,
            bframes=2,
            time_base=Fraction(1, 1000),
            start_ticks=1500,
            durations=(40,),
            options=_x264(50, 2),
        ),
        Encoding(
            "h264-rotated-90",
            "mp4",
            ".mp4",
            "libx264",
            Fraction(25),
            gop=25,
            rotation=90,
            options=_x264(25, 0),
        ),
        # AVI has no presentation timestamps: B-frame packets carry decode-order stamps.
        Encoding("h264-avi-bframes", "avi", ".avi", "libx264", Fraction(25), gop=50, bframes=2, options=_x264(50, 2)),
        # Broadcast-style open GOP in MPEG-TS (the source of write_open_gop_cut).
        Encoding(
            "h264-ts-open-gop",
            "mpegts",
            ".ts",
            "libx264",
            Fraction(30000, 1001),
            gop=24,
            bframes=2,
            options={**_x264(24, 2), "x264-params": _x264(24, 2)["x264-params"] + ":open-gop=1"},
        ),
    )
}

# Shapes whose container timestamps cannot time the frames, though every frame decodes in
# order (annotator.base.media.decoded), and one whose keyframes are no entry points.
ENCODINGS.update(
    (e.name, e)
    for e in (
        # Broadcast and low-latency encoders: one IDR, then recovery points ("keyframes" in the
        # container) from which a decoder shows nothing until the refresh has swept the picture.
        Encoding(
            "h264-intra-refresh",
            "mp4",
            ".mp4",
            "libx264",
            Fraction(25),
            gop=30,
            options={**_x264(30, 0), "x264-params": "keyint=30:intra-refresh=1:bframes=0"},
        ),
        # Matroska whose first frames are stamped before 0: its demuxer gives those blocks no
        # timestamp (a block cannot sit before its cluster), as some capture tools write them.
        Encoding(
            "h264-mkv-untimed-start",
            "matroska",
            ".mkv",
            "libx264",
            Fraction(25),
            gop=50,
            bframes=2,
            time_base=Fraction(1, 1000),
            start_ticks=-120,
            durations=(40,),
            options=_x264(50, 2),
            mux_options={"avoid_negative_ts": "disabled"},
        ),
        # A capture clock too coarse for its frames: every second frame repeats the stamp
        # of the one before.
        Encoding(
            "h264-mkv-repeated-stamps",
            "matroska",
            ".mkv",
            "libx264",
            Fraction(25),
            gop=50,
            time_base=Fraction(1, 1000),
            durations=(80, 0),
            options=_x264(50, 0),
        ),
        # A transport stream with closed GOPs and B-frames (the parts of write_timestamp_restart).
        Encoding("h264-ts-bframes", "mpegts", ".ts", "libx264", Fraction(25), gop=25, bframes=2, options=_x264(25, 2)),
    )
)

# The encodings a browser must play exactly (the acceptance list).
BROWSER_ENCODINGS = ("h264-24-gop250", "h264-2997-gop12", "h264-vfr-bframes", "vp9-webm", "h264-offset-1.5s")


def write_video(
    path: str | Path,
    encoding: Encoding | str,
    frame_count: int,
    *,
    width: int = 160,
    height: int = 96,
    textured: bool = False,
    progress: Callable[[int], None] | None = None,
    first_index: int = 0,
) -> Path:
    """Write a barcode video; returns its path (``encoding.suffix`` is not added).

    For a rotated encoding, frames are stored turned the other way so that, once the
    display rotation is applied, the barcode reads upright at ``width`` x ``height``.
    Frame ``i`` shows ``first_index + i``.
    """
    enc = ENCODINGS[encoding] if isinstance(encoding, str) else encoding
    path = Path(path)
    turns = (enc.rotation // 90) % 4
    coded_w, coded_h = (height, width) if turns % 2 else (width, height)
    background = texture(width, height) if textured else None
    with av.open(str(path), "w", format=enc.container, options=dict(enc.mux_options)) as out:
        stream = out.add_stream(enc.codec, rate=enc.rate, options=dict(enc.options))
        stream.width, stream.height, stream.pix_fmt = coded_w, coded_h, "yuv420p"
        stream.codec_context.time_base = enc.tick
        if enc.codec == "libvpx-vp9":
            stream.codec_context.gop_size = enc.gop
        if turns:
            stream.set_display_rotation(enc.rotation)
        for index, pts in enumerate(enc.frame_pts(frame_count)):
            img = render_frame(first_index + index, width, height, background)
            if turns:
                img = np.ascontiguousarray(np.rot90(img, -turns))
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts, frame.time_base = pts, enc.tick
            out.mux(stream.encode(frame))
            if progress is not None and index % 1000 == 0:
                progress(index)
        out.mux(stream.encode(None))
    return path


def write_broadcast_like(
    path: str | Path,
    frame_count: int,
    *,
    width: int = 1280,
    height: int = 720,
    rate: Fraction = Fraction(30000, 1001),
    video_kbps: int = 770,
    audio_kbps: int = 96,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """A barcode video of a broadcast file's shape: H.264 High at about ``video_kbps``
    (x264 ABR, B-frames, GOP up to 250, a VBV cap at twice the rate), a textured background
    that scrolls (real motion), and stereo AAC audio (a quiet 440 Hz tone) in MP4."""
    path = Path(path)
    background = texture(width, height)
    options = {
        "preset": "veryfast",
        "profile": "high",
        "x264-params": (
            f"keyint=250:min-keyint=25:bframes=3:bitrate={video_kbps}"
            f":vbv-maxrate={video_kbps * 2}:vbv-bufsize={video_kbps * 4}"
        ),
    }
    audio_rate, samples = 48000, 1024
    with av.open(str(path), "w", format="mp4") as out:
        video = out.add_stream("libx264", rate=rate, options=options)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.codec_context.time_base = 1 / rate
        audio = out.add_stream("aac", rate=audio_rate, layout="stereo")
        audio.bit_rate = audio_kbps * 1000
        audio_pts = 0
        for index in range(frame_count):
            frame = av.VideoFrame.from_ndarray(render_frame(index, width, height, background), format="rgb24")
            frame.pts, frame.time_base = index, 1 / rate
            out.mux(video.encode(frame))
            until = int((index + 1) / rate * audio_rate)  # audio up to this frame's end
            while audio_pts + samples <= until:
                t = (audio_pts + np.arange(samples)) / audio_rate
                tone = (0.05 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
                chunk = av.AudioFrame.from_ndarray(np.stack([tone, tone]), format="fltp", layout="stereo")
                chunk.sample_rate, chunk.pts = audio_rate, audio_pts
                out.mux(audio.encode(chunk))
                audio_pts += samples
            if progress is not None and index % 1800 == 0:
                progress(index)
        out.mux(video.encode(None))
        out.mux(audio.encode(None))
    return path


def iter_decoded_indices(path: str | Path) -> Iterator[tuple[int | None, int | None]]:
    """(pts, barcode index) of every decoded frame of ``path``, in presentation order."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for frame in container.decode(stream):
            yield frame.pts, read_barcode(frame.to_ndarray(format="rgb24"))


def write_open_gop_cut(path: str | Path, frame_count: int, *, cut_gop: int = 2, **kwargs) -> Path:
    """An open-GOP MPEG-TS cut by stream copy at a non-IDR I-frame, as broadcasters do.

    Writes ``h264-ts-open-gop`` (``frame_count`` frames) next to ``path``, then copies its
    packets from the ``cut_gop``-th keyframe on (in decode order) into ``path``. The
    leading B-frames after that I-frame reference the GOP before the cut: they are in
    the file, with timestamps, but no decoder can produce them. Barcodes keep the full
    video's indices, so the first decodable frame shows ``cut_gop * 24``.
    """
    path = Path(path)
    full = path.with_name(path.stem + ".full.ts")
    write_video(full, "h264-ts-open-gop", frame_count, **kwargs)
    try:
        with av.open(str(full)) as inp, av.open(str(path), "w", format="mpegts") as out:
            in_stream = inp.streams.video[0]
            stream = out.add_stream_from_template(in_stream)
            keys = 0
            copying = False
            for packet in inp.demux(in_stream):
                if packet.size == 0:
                    continue
                if packet.is_keyframe:
                    keys += 1
                    copying = copying or keys > cut_gop
                if copying:
                    packet.stream = stream
                    out.mux(packet)
    finally:
        full.unlink(missing_ok=True)
    return path


def write_timestamp_restart(path: str | Path, frame_count: int, *, restart_at: int, restart_ticks: int = 0) -> Path:
    """A transport stream whose timestamps start again at frame ``restart_at``, as DVB
    recordings and concatenated captures do: two ``h264-ts-bframes`` recordings, the
    second's barcodes continuing the first's, joined byte for byte. The second starts at
    ``restart_ticks`` (1/25 s) where the first started at 0: 0 repeats the first part's
    timestamps exactly; a value inside the first part makes the two overlap."""
    path = Path(path)
    base = ENCODINGS["h264-ts-bframes"]
    parts = [path.with_name(f"{path.stem}.part{k}.ts") for k in (0, 1)]
    try:
        write_video(parts[0], base, restart_at)
        second = replace(base, start_ticks=restart_ticks)
        write_video(parts[1], second, frame_count - restart_at, first_index=restart_at)
        path.write_bytes(parts[0].read_bytes() + parts[1].read_bytes())
    finally:
        for part in parts:
            part.unlink(missing_ok=True)
    return path


def write_edit_list_trim(path: str | Path, frame_count: int, *, trim_at: int, encoding: str = "h264-2997-gop12"):
    """An MP4 trimmed by stream copy at a non-keyframe (``ffmpeg -ss T -c copy``): the
    packets from the keyframe before frame ``trim_at`` on, shifted so that frame
    ``trim_at`` is at 0, behind an edit list that hides the frames before it. The video
    shows frames ``trim_at ..`` (their barcodes) but starts inside a GOP. ``encoding``:
    constant rate, no B-frames."""
    path = Path(path)
    enc = ENCODINGS[encoding]
    full = path.with_name(path.stem + ".full.mp4")
    write_video(full, enc, frame_count)
    try:
        with av.open(str(full)) as inp, av.open(str(path), "w", format="mp4") as out:
            in_stream = inp.streams.video[0]
            stream = out.add_stream_from_template(in_stream)
            stream.time_base = in_stream.time_base
            step = round(1 / (enc.rate * in_stream.time_base))
            packets = [p for p in inp.demux(in_stream) if p.size]
            shift = packets[0].pts + trim_at * step
            keyframe_pts = shift - (trim_at % enc.gop) * step
            for packet in packets:
                if packet.pts < keyframe_pts:
                    continue
                packet.pts -= shift
                packet.dts -= shift
                packet.stream = stream
                out.mux(packet)
    finally:
        full.unlink(missing_ok=True)
    return path
