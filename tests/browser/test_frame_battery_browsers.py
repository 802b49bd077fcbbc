"""The frame battery in every supported browser: Chromium (Playwright) and Firefox ESR
(puppeteer-core over WebDriver BiDi, tests/browser/firefox.py).

Every check reads the barcode from the pixels the <video> element shows and compares it
with the frame asked for, the frame the player reports and ``currentFrame``. Then the
check that must be able to fail: a proxy whose timestamps lie about one frame shows the
frame before it when that frame is asked for, and the player must say the picture is not
confirmed (Firefox's rVFC names the time asked for, so a check read from it could not fail;
the player reads that browser's picture against WebCodecs decodes of the file's samples).
"""

from __future__ import annotations

import random

import pytest

from annotator.base.media import synthetic
from tests.browser.ledger_pages import wait_ready
from tests.browser.lying_proxy import lie_about_one_frame
from tests.browser.real_keys import press_key, type_keys
from tests.browser.test_player import SEEK_BATCH_JS, STEP_RUN_JS, failures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SERVER = "uvicorn"  # the embedded default's server (tests/browser/conftest.py)

NAME = "h264-2997-gop12"  # 30000/1001: its pts are not whole microseconds
BOXES = synthetic.cell_boxes(160, 96)
OPENED = "() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)"


def open_player(page_in, packet, user):
    page = page_in(user, f"/packets/{packet.pk}/player/")
    page.wait_for_function(OPENED)
    assert page.evaluate("window.frameledger.loadError || null") is None
    return page


def test_jumps_steps_and_the_edges_show_the_frame_reported(page_in, media_packet, annotator_a, browser_name):
    packet = media_packet(NAME)
    page = open_player(page_in, packet, annotator_a)
    count = packet.video.frame_count
    rng = random.Random(f"{browser_name}-battery")
    targets = [0, 1, count - 2, count - 1] + [rng.randrange(count) for _ in range(60)]
    results = page.evaluate(SEEK_BATCH_JS, {"targets": targets, "boxes": BOXES})
    for start in (rng.randrange(count), 0, count - 1):
        steps = [1] * 12 + [-1] * 12 + [10, -10, -10]
        results += page.evaluate(STEP_RUN_JS, {"start": start, "steps": steps, "boxes": BOXES})
    assert len(results) == 64 + 3 * 27
    assert failures(results) == []
    assert page.evaluate("window.frameledger.player.lastError") is None
    assert page.evaluate("window.frameledger.player.confirmed") is True


def test_the_frame_check_fails_when_the_picture_is_wrong(page_in, media_packet, annotator_b, browser_name):
    packet = media_packet(NAME)
    lie = 50
    lie_about_one_frame(packet.video.proxy.path, lie)
    page = open_player(page_in, packet, annotator_b)
    results = page.evaluate(
        """async ({ targets, boxes }) => {
             const player = window.frameledger.player;
             const out = [];
             for (const target of targets) {
               const got = await player.seekToFrame(target);
               out.push({ target, got, confirmed: player.confirmed, reason: player.unconfirmedReason,
                          means: window.__flReadCells(boxes) });
             }
             return out;
           }""",
        {"targets": [lie - 1, lie, lie + 1, lie, 10], "boxes": BOXES},
    )
    seen = [(r["target"], synthetic.decode_cell_means(r["means"]), r["got"], r["confirmed"]) for r in results]
    # The frame asked for is not what the picture shows: not confirmed, and the frame
    # reported is the one on screen (never the one asked for).
    assert seen[1] == (lie, lie - 1, lie - 1, False), seen
    assert seen[3] == (lie, lie - 1, lie - 1, False), seen
    assert f"frame {lie} was asked for" in results[1]["reason"]
    # The frames around it, whose timestamps are true, are confirmed.
    assert [s for i, s in enumerate(seen) if i in (0, 2, 4)] == [
        (lie - 1, lie - 1, lie - 1, True),
        (lie + 1, lie + 1, lie + 1, True),
        (10, 10, 10, True),
    ]


# The barcode on screen at the next keydown, read just before and just after the player's own
# capture-phase listener takes its shot (the listeners reordered for the one key). Firefox swaps a
# playing video's picture off the main thread, so the picture can move on by a frame within one
# dispatch: the frame the player keeps must be one of the two read around its shot.
AT_NEXT_KEYDOWN_JS = """() => {
  const player = window.frameledger.player;
  const read = () => window.__flReadCells(window.__flBoxes);
  const capture = { capture: true };
  window.__flAtKeydown = null;
  window.__flAfterKeydown = null;
  window.removeEventListener("keydown", player._onAnyKeydown, capture);
  window.addEventListener("keydown", () => { window.__flAtKeydown = read(); }, { capture: true, once: true });
  window.addEventListener("keydown", player._onAnyKeydown, capture);
  window.addEventListener("keydown", () => { window.__flAfterKeydown = read(); }, { capture: true, once: true });
}"""


def around_keydown(before, after) -> set[int]:
    """The frames on screen around the player's keydown shot (one, or two where it moved on)."""
    return set(range(synthetic.decode_cell_means(before), synthetic.decode_cell_means(after) + 1))


# Plays from `start` at `rate`, the player focused; the barcode on screen at the next
# keydown (the test's Space) is kept in window.__flAtKeydown.
PLAY_JS = (
    """
async ({ start, rate }) => {
  const player = window.frameledger.player;
  await player.seekToFrame(start);
  player.setRate(rate);
  player.element.focus();
  ("""
    + AT_NEXT_KEYDOWN_JS
    + """)();
  await player.play();
}
"""
)


def test_a_pause_settles_on_the_frame_on_screen_at_the_keydown(page_in, media_packet, annotator_a, browser_name):
    packet = media_packet(NAME)
    page = open_player(page_in, packet, annotator_a)
    page.evaluate("(boxes) => { window.__flBoxes = boxes; }", BOXES)
    rng = random.Random(f"{browser_name}-pauses")
    count = packet.video.frame_count
    seen = []
    for index in range(12):
        rate = (1, 2, 0.5)[index % 3]
        start = rng.randrange(10, count // 2)
        page.evaluate(PLAY_JS, {"start": start, "rate": rate})
        page.wait_for_function("(n) => window.frameledger.player.currentFrame >= n", arg=start + rng.randrange(3, 20))
        press_key(page, "Space")
        result = page.evaluate(
            """async ({ boxes }) => {
                 const player = window.frameledger.player;
                 const settled = await player.settled();
                 return { settled, paused: player.paused, confirmed: player.confirmed,
                          keydown: window.__flAtKeydown, after: window.__flAfterKeydown,
                          means: window.__flReadCells(boxes) };
               }""",
            {"boxes": BOXES},
        )
        keydown = around_keydown(result["keydown"], result["after"])
        shown = synthetic.decode_cell_means(result["means"])
        seen.append((rate, sorted(keydown), result["settled"], shown, result["paused"], result["confirmed"]))
    wrong = [s for s in seen if not (s[2] == s[3] and s[2] in s[1] and s[4] and s[5])]
    assert wrong == [], f"(rate, at keydown, settled, shown, paused, confirmed): {wrong} of {seen}"


def test_the_readout_never_runs_ahead_of_the_picture_while_playing(page_in, media_packet, annotator_b, browser_name):
    packet = media_packet(NAME)
    page = open_player(page_in, packet, annotator_b)
    samples = []
    for rate in (1, 2):
        samples += page.evaluate(
            """async ({ rate, boxes }) => {
                 const player = window.frameledger.player;
                 await player.seekToFrame(20);
                 player.setRate(rate);
                 await player.play();
                 const out = [];
                 for (let i = 0; i < 100 && !player.video.ended; i++) {
                   await new Promise((resolve) => setTimeout(resolve, 7 + (i * 13) % 23));
                   out.push({ readout: Number(player.frameOut.textContent), means: window.__flReadCells(boxes) });
                 }
                 await player.pause();
                 return out;
               }""",
            {"rate": rate, "boxes": BOXES},
        )
    pairs = [(s["readout"], synthetic.decode_cell_means(s["means"])) for s in samples]
    ahead = [(readout, shown) for readout, shown in pairs if shown is None or readout > shown]
    assert len(pairs) >= 150
    assert ahead == [], f"the readout ran ahead of the picture in {len(ahead)} of {len(pairs)} samples: {ahead}"
    assert max(readout for readout, _ in pairs) > 40  # it played


def test_a_browser_without_an_h264_decoder_is_told_so_at_once(browser_server, media_packet, annotator_a):
    """Firefox with its FFmpeg decoders turned off has no H.264 decoder: the player says so
    within seconds instead of waiting out the 30 s load timeout."""
    from django.conf import settings
    from django.test import Client

    from tests.browser.firefox import FirefoxBrowser, missing

    if missing():
        pytest.skip(missing())
    packet = media_packet(NAME)
    client = Client()
    client.force_login(annotator_a)
    browser = FirefoxBrowser(prefs={"media.ffmpeg.enabled": False, "media.ffvpx.enabled": False})
    try:
        page = browser.new_page()
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        page.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": browser_server.url}])
        page.goto(f"{browser_server.url}/packets/{packet.pk}/player/")
        page.wait_for_function(OPENED, timeout=8000)
        error = page.evaluate("window.frameledger.loadError || null")
        assert error and "cannot play H.264" in error and "no decoder" in error, error
        shown = page.evaluate("document.querySelector('#player-load-error')?.textContent || ''")
        assert "H.264" in shown, shown
    finally:
        browser.close()


def test_pause_then_mark_marks_the_frame_on_screen_at_the_keydown(page_in, media_packet, annotator_a, browser_name):
    """In the workspace: Space plays, Space pauses, i right after marks the start. The start
    saved in the form is the barcode on screen when the pausing Space went down."""
    packet = media_packet(NAME)
    page = page_in(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.evaluate("(boxes) => { window.__flBoxes = boxes; }", BOXES)
    seen = []
    for index in range(4):
        page.evaluate("document.querySelector('#workspace').focus()")
        press_key(page, "Space")
        page.wait_for_function("(n) => window.frameledger.player.currentFrame > n", arg=8 + 5 * index)
        page.evaluate(AT_NEXT_KEYDOWN_JS)
        type_keys(page, " i", spacing_ms=30)
        page.wait_for_function("() => document.querySelector('#ev-start_frame').value !== ''")
        marked = int(page.evaluate("document.querySelector('#ev-start_frame').value"))
        keydown = around_keydown(page.evaluate("window.__flAtKeydown"), page.evaluate("window.__flAfterKeydown"))
        seen.append((sorted(keydown), marked))
        press_key(page, "Escape")
        press_key(page, "Escape")  # the draft discarded: the next i fills an empty box
        page.wait_for_function("() => document.querySelector('#ev-start_frame').value === ''")
    assert [s for s in seen if s[1] not in s[0]] == [], f"(on screen around the keydown, marked): {seen}"
