"""Sources whose demuxed timestamps a decoder does not honour: ingested, with a report.

- an open-GOP MPEG-TS cut by stream copy at a non-IDR I-frame: its two leading
  B-frames reference the GOP before the cut; no decoder produces them;
- H.264 with B-frames in AVI: packets carry decode-order timestamps.

Both are generated here (``annotator.base.media.synthetic``), every frame showing its own
index as a barcode, so the tests can tell exactly which source frames the proxy kept.
"""

from __future__ import annotations

import pytest

from annotator.base.media import synthetic
from annotator.base.media.errors import FrameMismatch
from annotator.base.media.frametable import FrameTable, build_frame_table
from annotator.base.media.probe import probe
from annotator.base.media.proxy import PROXY_GOP, make_proxy
from annotator.base.media.timeline import CONTAINER, DECODE_ORDER, FrameAssigner
from tests.media.conftest import OPEN_GOP_CUT, OPEN_GOP_CUT_FIRST_BARCODE


def test_the_open_gop_cut_drops_exactly_the_two_leading_b_frames(synthetic_source, tmp_path):
    source = synthetic_source(OPEN_GOP_CUT)
    probed = probe(source)
    assert probed.timestamps == CONTAINER
    demuxed = build_frame_table(source)
    report: dict = {}
    table = make_proxy(source, tmp_path / "proxy.mp4", probed, report=report)

    assert report["timestamps"] == CONTAINER
    assert report["source_frame_count"] == demuxed.frame_count
    assert report["dropped_count"] == 2
    assert [(d["source_index"], d["pts_ticks"]) for d in report["dropped"]] == [
        (0, demuxed.pts[0]),
        (1, demuxed.pts[1]),
    ]
    assert report["dropped"][1]["seconds"] == pytest.approx(float(demuxed.pts[1] * demuxed.time_base))
    assert table.frame_count == demuxed.frame_count - 2
    # The kept frames are the source's frames 2.. with their own timing, shifted to 0.
    assert [p * table.time_base for p in table.pts] == [
        (p - demuxed.pts[2]) * demuxed.time_base for p in demuxed.pts[2:]
    ]
    barcodes = [index for _, index in synthetic.iter_decoded_indices(tmp_path / "proxy.mp4")]
    assert barcodes == list(range(OPEN_GOP_CUT_FIRST_BARCODE, OPEN_GOP_CUT_FIRST_BARCODE + table.frame_count))
    assert table.keyframes == tuple(range(0, table.frame_count, PROXY_GOP))


def test_avi_with_b_frames_takes_presentation_order_from_the_decoder(synthetic_source, tmp_path):
    source = synthetic_source("h264-avi-bframes")
    probed = probe(source)
    assert probed.timestamps == DECODE_ORDER
    # The decoder hands frames back with their packets' decode-order stamps: not increasing.
    stamps = [pts for pts, _ in synthetic.iter_decoded_indices(source)]
    assert stamps != sorted(stamps)
    report: dict = {}
    table = make_proxy(source, tmp_path / "proxy.mp4", probed, report=report)
    assert (report["timestamps"], report["dropped_count"], report["dropped"]) == (DECODE_ORDER, 0, [])
    assert table.frame_count == probed.frame_count == 100
    assert [index for _, index in synthetic.iter_decoded_indices(tmp_path / "proxy.mp4")] == list(range(100))
    src = probed.table
    assert [p * table.time_base for p in table.pts] == [(p - src.pts[0]) * src.time_base for p in src.pts]


def _table(pts):
    from fractions import Fraction

    return FrameTable(time_base=Fraction(1, 10), pts=tuple(pts), keyframes=(0,), rate=Fraction(10), end=pts[-1] + 1)


def test_the_assigner_drops_skipped_frames_and_refuses_anything_else():
    assigner = FrameAssigner(_table([0, 1, 2, 3, 4, 5]))
    assert [assigner.assign(p) for p in (0, 3, 4, 5)] == [0, 3, 4, 5]
    assigner.finish()
    assert assigner.dropped == [(1, 1), (2, 2)]

    backwards = FrameAssigner(_table([0, 1, 2, 3]))
    backwards.assign(0)
    backwards.assign(2)
    with pytest.raises(FrameMismatch, match="out of order"):
        backwards.assign(1)  # a frame already passed over: never silently reordered

    unknown = FrameAssigner(_table([0, 1, 2, 3]))
    with pytest.raises(FrameMismatch, match="does not list"):
        unknown.assign(7)

    truncated = FrameAssigner(_table([0, 1, 2, 3]))
    truncated.assign(0)
    truncated.assign(1)
    with pytest.raises(FrameMismatch, match="truncated"):
        truncated.finish()  # frames missing at the end are a cut file, not undecodable frames

    decode_order = FrameAssigner(_table([0, 1, 2]), DECODE_ORDER)
    assert [decode_order.assign(p) for p in (0, 2, 1)] == [0, 1, 2]
    with pytest.raises(FrameMismatch, match="more frames"):
        decode_order.assign(3)


@pytest.mark.django_db
@pytest.mark.parametrize("name,dropped", [(OPEN_GOP_CUT, [0, 1]), ("h264-avi-bframes", [])])
def test_ingest_records_the_report_on_the_video_job_audit_and_api(ingest, client, maintainer, name, dropped):
    from annotator.models import AuditEntry

    video = ingest(name)
    assert [d["source_index"] for d in video.ingest_report["dropped"]] == dropped
    assert video.frame_count == video.ingest_report["source_frame_count"] - len(dropped)
    job = video.jobs.get()
    assert job.result["dropped_frames"] == dropped
    assert AuditEntry.objects.get(operation="video.ingest").details["dropped_frames"] == dropped
    client.force_login(maintainer)
    body = client.get(f"/api/videos/{video.pk}/").json()
    assert body["ingest_report"] == video.ingest_report
    assert body["frame_count"] == video.frame_count
