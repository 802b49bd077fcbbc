"""Sources whose container timestamps cannot time their frames, though ffmpeg decodes every
frame in order: ingested from the decoder's output order, exact, with what was repaired.

- a transport stream whose timestamps start again mid-file (two recordings joined, as DVB
  recordings and concatenated captures are): the restart repeats the first part's stamps
  exactly, or lands inside it;
- a Matroska file whose first video blocks carry no timestamp;
- a capture whose clock repeats the stamp of the frame before.

Before, each was refused ("two frames share the presentation timestamp", "remux it into MP4
or MKV first"), or sorting the stamps would interleave the two parts of a restart. Every
frame of every source shows its own index, so the proxy's barcodes prove the order.
"""

from __future__ import annotations

import pytest

from annotator.base.media import synthetic
from annotator.base.media.decoded import retime
from annotator.base.media.errors import UntimedMedia
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.timeline import DECODED
from annotator.models import Video
from tests.media.conftest import TS_RESTART, TS_RESTART_OVERLAP

pytestmark = pytest.mark.django_db

SHAPES = {
    TS_RESTART: (120, "restart"),
    TS_RESTART_OVERLAP: (120, "restart"),
    "h264-mkv-untimed-start": (100, "missing"),
    "h264-mkv-repeated-stamps": (100, "repeat"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_container_table_of_each_shape_is_refused_as_untimed(synthetic_source, name):
    with pytest.raises(UntimedMedia):
        build_frame_table(synthetic_source(name))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_ingested_with_every_frame_once_in_order_and_a_report(ingest, name):
    count, kind = SHAPES[name]
    video = ingest(name)
    assert video.status == Video.Status.READY and video.error == ""
    assert video.frame_count == count and not video.remux  # the browser could not seek it
    shown = [index for _, index in synthetic.iter_decoded_indices(video.proxy.path)]
    assert shown == list(range(count))
    table = FrameTable.load(video.frame_table.path)
    assert table.frame_count == count and table.pts[0] == 0
    assert all(b > a for a, b in zip(table.pts, table.pts[1:], strict=False))
    report = video.ingest_report
    assert report["timestamps"] == DECODED and report["dropped_count"] == 0
    assert report["repaired"]["counts"].get(kind, 0) >= 1 and report["repaired"]["reason"]
    job = video.jobs.get()
    assert job.result["timestamps"] == DECODED and "remux_refused" in job.result


def test_a_restart_keeps_the_parts_own_frame_durations():
    # Two parts of 25 fps (3,600 ticks of 1/90000 s) joined, the second restarting at 0.
    first = [126_000 + 3_600 * i for i in range(5)]
    times, repairs = retime(first + first[:3], 3_600, 900_000)
    assert times == [126_000 + 3_600 * i for i in range(8)]
    assert [(r.kind, r.frame) for r in repairs] == [("restart", 5)]


def test_missing_leading_stamps_are_placed_one_interval_before_the_first_known():
    times, repairs = retime([None, None, 0, 40, None, 120], 40, 10_000)
    assert times == [-80, -40, 0, 40, 80, 120]
    assert [(r.kind, r.frame) for r in repairs] == [("missing", 0), ("missing", 1), ("missing", 4)]


def test_a_repeated_stamp_lasts_one_interval_and_the_next_frame_keeps_its_own_time():
    times, repairs = retime([0, 80, 80, 160, 160, 240], 40, 10_000)
    assert times == [0, 80, 120, 160, 200, 240]
    assert [r.kind for r in repairs] == ["repeat", "repeat"]


def test_a_leap_beyond_the_gap_limit_is_a_restart_but_a_real_gap_is_kept():
    assert retime([0, 40, 400, 440], 40, 1_000)[0] == [0, 40, 400, 440]  # a 360-tick gap survives
    assert retime([0, 40, 5_000, 5_040], 40, 1_000)[0] == [0, 40, 80, 120]
