"""frame_clock.js (pure time <-> frame maths), run as the ES module the player imports."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NTSC = {"fps_num": 30000, "fps_den": 1001, "pts": [i * 1001 / 30000 for i in range(10)], "frame_count": 10}
VFR = {"fps_num": 30, "fps_den": 1, "pts": [0, 0.0333, 0.075, 0.0917, 0.1583], "end": 0.2}


@pytest.fixture
def clock_page(chromium, live_server):
    context = chromium.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/login/")
    page.evaluate("async () => { window.fc = await import('/static/frontend/js/frame_clock.js'); }")
    yield page
    context.close()


def run(page, table, expression):
    return page.evaluate(f"(table) => {{ const c = new window.fc.FrameClock(table); return {expression}; }}", table)


def test_seek_time_is_the_midpoint_of_a_frame_and_the_next(clock_page):
    times = run(clock_page, NTSC, "[0, 1, 5, 9].map((n) => c.seekTime(n))")
    step = 1001 / 30000
    assert times[:3] == pytest.approx([step / 2, 1.5 * step, 5.5 * step], abs=1e-12)
    assert times[3] == pytest.approx(9.5 * step, abs=1e-12)  # last frame: half the previous gap past it


def test_seek_time_of_variable_rate_frames_uses_their_own_neighbours(clock_page):
    times = run(clock_page, VFR, "[0, 1, 2, 3, 4].map((n) => c.seekTime(n))")
    assert times == pytest.approx([0.01665, 0.05415, 0.08335, 0.125, 0.17915])


def test_media_time_names_the_nearest_frame_even_a_microsecond_early(clock_page):
    # rVFC mediaTime is rounded to microseconds: 1001/30000 s arrives as 0.033366.
    frames = run(clock_page, NTSC, "[0, 0.033366, 0.033367, 0.066733, 0.3003].map((t) => c.frameAtMediaTime(t))")
    assert frames == [0, 1, 1, 2, 9]


def test_playhead_time_shows_the_last_frame_started(clock_page):
    frames = run(clock_page, VFR, "[-1, 0, 0.0332, 0.0333, 0.09, 0.5].map((t) => c.frameAtTime(t))")
    assert frames == [0, 0, 0, 1, 2, 4]


def test_every_midpoint_maps_back_to_its_frame(clock_page):
    assert run(clock_page, NTSC, "[...Array(10).keys()].every((n) => c.frameAtTime(c.seekTime(n)) === n)")
    assert run(clock_page, VFR, "[...Array(5).keys()].every((n) => c.frameAtMediaTime(c.seekTime(n) - 1e-9) >= 0)")


def test_timecode_and_rate_label_use_the_rational_rate(clock_page):
    assert run(clock_page, NTSC, "[c.timecode(9), c.fpsLabel, c.clamp(99), c.clamp(-3), c.frameDuration]") == [
        "00:00:00.300",
        "30000/1001 (29.970)",
        9,
        0,
        1001 / 30000,
    ]
    assert clock_page.evaluate("window.fc.formatSeconds(7262.5)") == "02:01:02.500"


def test_a_variable_rate_reads_as_the_range_of_its_common_frame_rates(clock_page):
    # The issue: a VFR phone clip read "16200/361 (44.875) fps". Frames of 1/30 and 1/60 s:
    half = [i / 60 for i in range(100)]
    mixed = sorted({*half[:50], *[50 / 60 + i / 30 for i in range(50)]})
    assert run(clock_page, {"fps_num": 16200, "fps_den": 361, "pts": mixed}, "c.fpsLabel") == "variable, 30\u201360"
    # One dropped frame in 300 (a frame of 2/30 s) does not widen the range.
    dropped = [i / 30 for i in range(150)] + [(i + 1) / 30 for i in range(150, 300)]
    assert run(clock_page, {"fps_num": 30, "fps_den": 1, "pts": dropped}, "c.fpsLabel") == "variable, about 30"
    # Constant rates keep their exact fraction.
    assert run(clock_page, {"fps_num": 24, "fps_den": 1, "pts": [i / 24 for i in range(48)]}, "c.fpsLabel") == "24"
    assert clock_page.evaluate("[29.97002997, 59.94, 30.004].map(window.fc.formatRate)") == ["29.97", "59.94", "30"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"fps_num": 24, "fps_den": 1, "pts": []}, "no frames"),
        ({"fps_num": 24, "fps_den": 1, "pts": [0, 0.1, 0.1]}, "not increasing"),
        ({"fps_num": 24, "fps_den": 1, "pts": [0, 0.1], "frame_count": 3}, "does not match"),
        ({"fps_num": 0, "fps_den": 1, "pts": [0]}, "positive fraction"),
    ],
)
def test_a_broken_table_is_refused(clock_page, table, message):
    error = clock_page.evaluate(
        "(table) => { try { new window.fc.FrameClock(table); return null; } catch (e) { return e.message; } }", table
    )
    assert error is not None and message in error


def _compact_cases(synthetic_source):
    from fractions import Fraction

    from annotator.base.media.frametable import FrameTable, build_frame_table

    match = FrameTable(  # the seed match: 214,363 frames at 30000/1001, a keyframe every 12
        time_base=Fraction(1, 30000),
        pts=tuple(range(0, 214_363 * 1001, 1001)),
        keyframes=tuple(range(0, 214_363, 12)),
        rate=Fraction(30000, 1001),
        end=214_363 * 1001,
    )
    return [match, build_frame_table(synthetic_source("h264-vfr-bframes"))]


def test_the_compact_table_expands_to_exactly_the_servers_seconds(clock_page, synthetic_source):
    for table in _compact_cases(synthetic_source):
        data = table.to_json()
        got = clock_page.evaluate(
            """(data) => {
                 const t = window.fc.expandTable(data);
                 const c = window.fc.FrameClock.fromTable(data);
                 return { pts: t.pts, keyframes: t.keyframes, count: c.frameCount, end: c.end };
               }""",
            data,
        )
        assert got["count"] == table.frame_count
        # Bit for bit: the double nearest each exact rational, as Python computes it.
        assert got["pts"] == [table.seconds(i) for i in range(table.frame_count)]
        assert got["keyframes"] == list(table.keyframes)
        assert got["end"] == table.end * table.time_base.numerator / table.time_base.denominator
    assert len(_compact_cases(synthetic_source)[0].dumps()) < 300  # two hours of frames in a few numbers


def test_a_compact_table_with_the_wrong_count_is_refused(clock_page, synthetic_source):
    data = _compact_cases(synthetic_source)[1].to_json()
    data["frame_count"] += 1
    error = clock_page.evaluate(
        "(d) => { try { window.fc.FrameClock.fromTable(d); return null; } catch (e) { return e.message; } }", data
    )
    assert error is not None and "does not match" in error
