"""The per-frame timestamp table from packet demux, checked against full decoding."""

from __future__ import annotations

import json
from fractions import Fraction

import av
import pytest

from annotator.base.media import synthetic
from annotator.base.media.errors import UnsupportedMedia
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.probe import normalise_rotation, probe
from tests.media.conftest import FRAME_COUNTS, UNTIMED


def decoded_frames(path):
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return [(frame.pts, frame.key_frame) for frame in container.decode(stream)]


# AVI's decode-order stamps are the case where they differ (tests/media/test_robust_tables.py);
# the container cannot time the untimed shapes at all (tests/media/test_untimed_sources.py),
# and an intra-refresh stream's container keyframes are recovery points the decoder does not
# flag (tests/media/test_remux_entry_points.py).
EXCEPTIONS = {"h264-avi-bframes", "h264-intra-refresh", *UNTIMED}


@pytest.mark.parametrize("name", sorted(set(FRAME_COUNTS) - EXCEPTIONS))
def test_demuxed_table_equals_the_decoded_timestamps(synthetic_source, name):
    path = synthetic_source(name)
    table = build_frame_table(path)
    frames = decoded_frames(path)
    assert table.frame_count == len(frames) == FRAME_COUNTS[name]
    assert list(table.pts) == [pts for pts, _ in frames]
    assert [i for i, (_, key) in enumerate(frames) if key] == list(table.keyframes)


def test_probe_reports_the_exact_rational_rate_of_2997(synthetic_source):
    probed = probe(synthetic_source("h264-2997-gop12"))
    assert probed.rate == Fraction(30000, 1001)
    assert probed.codec == "h264"
    assert (probed.width, probed.height, probed.rotation) == (160, 96, 0)
    assert probed.duration == pytest.approx(240 * 1001 / 30000)
    assert probed.table.is_constant_rate


def test_probe_of_a_24fps_long_gop_stream_with_b_frames(synthetic_source):
    probed = probe(synthetic_source("h264-24-gop250"))
    assert probed.rate == 24
    assert probed.table.keyframes == (0, 250)
    assert probed.duration == pytest.approx(300 / 24)


def test_probe_sees_variable_frame_rate(synthetic_source):
    table = probe(synthetic_source("h264-vfr-bframes")).table
    assert not table.is_constant_rate
    steps = {b - a for a, b in zip(table.pts, table.pts[1:], strict=False)}
    assert steps == set(synthetic.ENCODINGS["h264-vfr-bframes"].durations)


def test_probe_keeps_a_start_offset(synthetic_source):
    probed = probe(synthetic_source("h264-offset-1.5s"))
    assert probed.start_time == 1.5
    assert probed.rate == 25
    assert probed.table.seconds(1) == pytest.approx(1.54)


def test_probe_of_vp9_webm(synthetic_source):
    probed = probe(synthetic_source("vp9-webm"))
    assert probed.codec == "vp9"
    assert probed.frame_count == FRAME_COUNTS["vp9-webm"]
    assert probed.rate == 30


def test_probe_reads_the_display_rotation(synthetic_source):
    probed = probe(synthetic_source("h264-rotated-90"))
    assert probed.rotation == 90
    assert (probed.width, probed.height) == (96, 160)
    assert probed.display_size == (160, 96)


@pytest.mark.parametrize(("angle", "expected"), [(0, 0), (90, 90), (-90, 270), (180, 180), (-180, 180), (89.99, 90)])
def test_rotation_snaps_to_quarter_turns(angle, expected):
    assert normalise_rotation(angle) == expected


def test_rotation_that_is_not_a_quarter_turn_is_refused():
    with pytest.raises(UnsupportedMedia):
        normalise_rotation(45)


def test_table_json_round_trips_and_lists_seconds(synthetic_source):
    table = build_frame_table(synthetic_source("h264-2997-gop12"))
    data = json.loads(table.dumps())
    assert (data["fps_num"], data["fps_den"], data["frame_count"]) == (30000, 1001, 240)
    assert (data["version"], data["pts_start"], data["pts_deltas"]) == (2, 0, [[1001, 239]])
    assert FrameTable.from_json(data) == table
    assert FrameTable.from_json(data).seconds(3) == 3 * 1001 / 30000


def test_compact_encoding_round_trips_variable_rate_and_reads_version_1(synthetic_source):
    from annotator.base.media.frametable import decode_runs, encode_runs

    assert encode_runs([5, 8, 11, 14, 15, 17, 19]) == [[3, 3], [1, 1], [2, 2]]
    assert decode_runs(5, [[3, 3], [1, 1], [2, 2]]) == (5, 8, 11, 14, 15, 17, 19)
    assert encode_runs([7]) == [] and decode_runs(7, []) == (7,)
    vfr = build_frame_table(synthetic_source("h264-vfr-bframes"))
    assert FrameTable.from_json(json.loads(vfr.dumps())) == vfr
    num, den = vfr.time_base.numerator, vfr.time_base.denominator
    version_1 = {  # the long form ingests wrote before version 2
        "version": 1,
        "fps_num": 30,
        "fps_den": 1,
        "frame_count": vfr.frame_count,
        "time_base": [num, den],
        "end_ticks": vfr.end,
        "pts": [p * num / den for p in vfr.pts],
        "pts_ticks": list(vfr.pts),
        "keyframes": list(vfr.keyframes),
    }
    assert FrameTable.from_json(version_1) == FrameTable(**{**vfr.__dict__, "rate": Fraction(30)})
    broken = json.loads(vfr.dumps())
    broken["frame_count"] += 1
    with pytest.raises(Exception, match="frame_count"):
        FrameTable.from_json(broken)


def test_garbage_is_not_a_video(tmp_path):
    path = tmp_path / "noise.mp4"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(UnsupportedMedia, match="not a readable video file"):
        build_frame_table(path)


def test_audio_only_file_has_no_video_stream(tmp_path):
    path = tmp_path / "tone.wav"
    with av.open(str(path), "w", format="wav") as out:
        stream = out.add_stream("pcm_s16le", rate=8000)
        frame = av.AudioFrame(format="s16", layout="mono", samples=800)
        for plane in frame.planes:
            plane.update(bytes(plane.buffer_size))
        frame.sample_rate, frame.pts = 8000, 0
        out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    with pytest.raises(UnsupportedMedia, match="no video stream"):
        probe(path)


def test_the_rate_label_reads_as_a_person_expects(synthetic_source):
    # The issue: a VFR phone clip read "16200/361 (44.875) fps" (its average rate).
    assert build_frame_table(synthetic_source("h264-vfr-bframes")).rate_label == "variable, 15\u201360"
    assert build_frame_table(synthetic_source("h264-2997-gop12")).rate_label == "30000/1001 (29.970)"
    assert build_frame_table(synthetic_source("h264-24-gop250")).rate_label == "24"
    # One dropped frame in 300 does not make a range.
    dropped = FrameTable(Fraction(1, 30), tuple([*range(150), *range(151, 301)]), (0,), Fraction(30), 301)
    assert dropped.rate_label == "variable, about 30"
