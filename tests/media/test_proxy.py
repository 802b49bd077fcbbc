"""The annotation proxy: one-to-one frames, timestamps from 0, short GOP, faststart, silent."""

from __future__ import annotations

import struct
import subprocess
from dataclasses import replace

import av
import imageio_ffmpeg
import pytest

from annotator.base.media import synthetic
from annotator.base.media.errors import FrameMismatch
from annotator.base.media.frametable import build_frame_table
from annotator.base.media.probe import probe
from annotator.base.media.proxy import PROXY_GOP, check_proxy_table, make_proxy, proxy_size
from tests.media.conftest import FRAME_COUNTS


def top_level_boxes(path) -> list[str]:
    boxes, data = [], path.read_bytes()
    pos = 0
    while pos + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if size == 1:
            size = struct.unpack(">Q", data[pos + 8 : pos + 16])[0]
        boxes.append(kind.decode("latin-1"))
        if size < 8:
            break
        pos += size
    return boxes


@pytest.mark.parametrize("name", sorted(FRAME_COUNTS))
def test_proxy_passes_every_frame_through_once_in_order(proxy_of, name):
    proxy, table, probed = proxy_of(name)
    decoded = list(synthetic.iter_decoded_indices(proxy))
    assert [index for _, index in decoded] == list(range(FRAME_COUNTS[name]))
    assert table.frame_count == probed.frame_count == FRAME_COUNTS[name]


@pytest.mark.parametrize("name", sorted(FRAME_COUNTS))
def test_proxy_keeps_source_timing_shifted_to_zero(proxy_of, name):
    _, table, probed = proxy_of(name)
    src = probed.table
    assert table.pts[0] == 0
    for proxy_pts, source_pts in zip(table.pts, src.pts, strict=True):
        assert proxy_pts * table.time_base == (source_pts - src.pts[0]) * src.time_base
    assert table.rate == probed.rate
    assert table.duration == pytest.approx(src.duration)


@pytest.mark.parametrize("name", sorted(FRAME_COUNTS))
def test_proxy_is_h264_mp4_with_short_gop_no_b_frames_and_faststart(proxy_of, name):
    proxy, table, _ = proxy_of(name)
    assert table.keyframes == tuple(range(0, table.frame_count, PROXY_GOP))
    with av.open(str(proxy)) as container:
        assert container.format.name.startswith("mov,mp4")
        (stream,) = container.streams
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.has_b_frames == 0
        packets = [p for p in container.demux(stream) if p.size]
        assert all(p.pts == p.dts for p in packets)
    boxes = top_level_boxes(proxy)
    assert boxes.index("moov") < boxes.index("mdat")


def test_variable_frame_rate_survives_the_proxy(proxy_of):
    _, table, _ = proxy_of("h264-vfr-bframes")
    assert not table.is_constant_rate


def test_rotated_source_becomes_an_upright_proxy(proxy_of):
    proxy, _, probed = proxy_of("h264-rotated-90")
    assert probed.rotation == 90
    with av.open(str(proxy)) as container:
        frame = next(container.decode(video=0))
        assert (frame.width, frame.height) == (160, 96)
        assert frame.rotation == 0


def test_proxy_of_a_source_with_sound_is_silent(synthetic_source, tmp_path):
    source = synthetic_source("h264-2997-gop12")
    with_sound = tmp_path / "with-sound.mp4"
    ffmpeg = imageio_ffmpeg.get_ffmpeg_exe()
    tone = "sine=frequency=440:sample_rate=48000"
    subprocess.run(
        f"{ffmpeg} -v error -i {source} -f lavfi -i {tone} -shortest -map 0:v -map 1:a -c:v copy -c:a aac".split()
        + [str(with_sound)],
        check=True,
    )
    probed = probe(with_sound)
    assert probed.has_audio
    dest = tmp_path / "proxy.mp4"
    make_proxy(with_sound, dest, probed)
    with av.open(str(dest)) as container:
        assert [s.type for s in container.streams] == ["video"]


def test_large_frames_are_scaled_down_to_even_sizes():
    assert proxy_size(3840, 2160, 1080) == (1920, 1080)
    assert proxy_size(1279, 719, 1080) == (1278, 718)
    assert proxy_size(160, 96, 1080) == (160, 96)


def test_a_missing_frame_is_caught(proxy_of):
    _, table, probed = proxy_of("h264-2997-gop12")
    dropped = replace(table, pts=table.pts[:100] + table.pts[101:])
    with pytest.raises(FrameMismatch, match="frames"):
        check_proxy_table(probed.table, dropped, PROXY_GOP)


def test_a_shifted_frame_is_caught(proxy_of):
    _, table, probed = proxy_of("h264-2997-gop12")
    moved = replace(table, pts=table.pts[:50] + (table.pts[50] + 1,) + table.pts[51:])
    with pytest.raises(FrameMismatch, match="proxy frame 50"):
        check_proxy_table(probed.table, moved, PROXY_GOP)


def test_a_truncated_source_fails_instead_of_making_a_short_proxy(synthetic_source, tmp_path):
    source = synthetic_source("h264-offset-1.5s")  # Matroska: readable when cut short
    probed = probe(source)
    cut = tmp_path / "cut.mkv"
    cut.write_bytes(source.read_bytes()[: source.stat().st_size * 2 // 3])
    with pytest.raises(FrameMismatch):
        make_proxy(cut, tmp_path / "proxy.mp4", probed)
    assert build_frame_table(cut).frame_count < probed.frame_count


def test_the_bit_rate_cap_is_the_sources_above_the_keyframes_floor():
    from fractions import Fraction

    from annotator.base.media.proxy import bitrate_cap_kbps

    ntsc = Fraction(30000, 1001)
    # Item 3 of issue 27: the seed's 771 kbit/s 720p match got a 2,796 kbit/s proxy (a
    # 0.1 bit-per-pixel floor); the measured floor is 0.035: 966 kbit/s at 720p, 30000/1001.
    assert bitrate_cap_kbps(771_000, 1280, 720, ntsc) == 966
    assert bitrate_cap_kbps(1_500_000, 1280, 720, ntsc) == 1500  # above the floor: the source's
    assert bitrate_cap_kbps(6_010_000, 1280, 720, Fraction(24)) == 6010
    assert bitrate_cap_kbps(9_000, 160, 96, Fraction(30)) == 32  # tiny frames: 32 kbit/s at least
    assert bitrate_cap_kbps(0, 1280, 720, ntsc) == 0


@pytest.mark.parametrize("kbps", [300, 1500])
def test_a_broadcast_like_720p_proxy_stays_at_its_cap_and_every_frame_is_its_own(tmp_path, kbps):
    """720p, 30000/1001 with AAC audio: at 300 kbit/s (below the keyframes' floor) the proxy
    gets the floor and not more; at 1,500 (above it) the source's rate and not more; every
    frame reads its own index either way (a starved keyframe shows the previous picture)."""
    from annotator.base.media.proxy import bitrate_cap_kbps

    source = synthetic.write_broadcast_like(tmp_path / "broadcast.mp4", 240, video_kbps=kbps)
    probed = probe(source)
    proxy = tmp_path / "proxy.mp4"
    make_proxy(source, proxy, probed, gop=PROXY_GOP)
    seconds = 240 / (30000 / 1001)
    cap = bitrate_cap_kbps(probed.bit_rate, 1280, 720, probed.rate) * 1000
    proxy_bps = proxy.stat().st_size * 8 / seconds
    assert proxy_bps <= cap + cap / seconds + 64_000  # the one-second buffer + the MP4 index
    if probed.bit_rate > cap * 0.99:
        assert proxy_bps <= probed.bit_rate * 1.2
    indices = [index for _pts, index in synthetic.iter_decoded_indices(proxy)]
    assert indices == list(range(240))
