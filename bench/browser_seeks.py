"""Random seeks in headless Chromium on an uploaded video, with the bytes on both sides.

The player page of a packet on the video (``/packets/<id>/player/``) seeks ``seeks`` random
frames one after another (``player.seekToFrame``) and reads the barcode of each. Chrome's
DevTools protocol counts the media bytes the browser received (``Network.dataReceived``'s
``encodedDataLength``: what came off the socket, headers and all); the server's access log
says what it sent. Their ratio is how far serving ran ahead of what the browser needed.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from media import CHROMIUM, CHROMIUM_ARGS, SEEK_JS, percentile

LOADED_JS = "() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)"


@dataclass
class BrowserSeeks:
    seeks: int
    exact: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    received: int  # media bytes off the browser's sockets
    cached: int  # media bytes it read from its own cache instead


def browser_seeks(base: str, packet: int, cookie: tuple[str, str], frame_count: int, seeks: int) -> BrowserSeeks:
    from playwright.sync_api import sync_playwright

    from annotator.base.media import synthetic

    rng = random.Random(27)
    targets = [rng.randrange(frame_count) for _ in range(seeks)]
    warmup = [rng.randrange(frame_count) for _ in range(10)]
    media: dict[str, str] = {}
    received, cached = [0], [0]

    def sent_request(event):
        if "/media/packets/" in event["request"]["url"] and ".mp4" in event["request"]["url"]:
            media[event["requestId"]] = event["request"]["url"]

    def got_data(event):
        if event["requestId"] in media:
            # encodedDataLength is 0 for a read from the browser's cache: only network bytes count
            received[0] += event.get("encodedDataLength", 0)
            cached[0] += event.get("dataLength", 0) if not event.get("encodedDataLength") else 0

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context()
        context.add_cookies([{"name": cookie[0], "value": cookie[1], "url": base}])
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.on("Network.requestWillBeSent", sent_request)
        cdp.on("Network.dataReceived", got_data)
        cdp.send("Network.enable")
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        page.goto(f"{base}/packets/{packet}/player/")
        try:
            page.wait_for_function(LOADED_JS, timeout=120_000)
        except Exception as error:
            raise RuntimeError(f"the player did not load at {page.url}: {console[-10:]}") from error
        failed = page.evaluate("() => window.frameledger.loadError ? String(window.frameledger.loadError) : ''")
        if failed:
            raise RuntimeError(f"the player did not load: {failed}")
        size = page.evaluate(
            "[window.frameledger.player.video.videoWidth, window.frameledger.player.video.videoHeight]"
        )
        boxes = synthetic.cell_boxes(*size)
        results = page.evaluate(SEEK_JS, {"targets": targets, "boxes": boxes, "warmup": warmup})
        page.wait_for_timeout(1000)  # the last responses' bytes reach the counters
        browser.close()
    times = [r["ms"] for r in results]
    exact = sum(1 for r in results if synthetic.decode_cell_means(r["means"]) == r["target"] == r["got"])
    return BrowserSeeks(
        seeks=len(results),
        exact=exact,
        p50_ms=statistics.median(times),
        p95_ms=percentile(times, 0.95),
        max_ms=max(times),
        received=received[0],
        cached=cached[0],
    )
