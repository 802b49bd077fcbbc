"""The whole blind two-annotator protocol in real headless Chromium, through the pages.

Annotators A and B (separate browser contexts) each create their events with the
keyboard only; every response body and websocket frame B's browser receives, and B's
page text, are checked for anything of A's; both freeze; the adjudicator (a third
context) resolves every item and publishes; the maintainer downloads the export zip
from the version page and it scores 1.0 against itself with the project's scorer.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from annotator.models import GroundTruthVersion, Ledger
from scoring import score_submission
from tests.browser.ledger_pages import (
    add_action_by_keyboard,
    ledger_rows,
    screenshot,
    wait_frame,
    wait_ready,
    wait_saved,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"  # 240 frames at 30000/1001, GOP 12
FRAMES = 240

# (start, end, verb, nouns). Item by item the union will be: agreed, conflicting
# (nouns differ, start differs by 3), A only, B only.
A_EVENTS = [(20, 40, "crack", ["egg"]), (60, 90, "pour", ["milk"]), (150, 170, "take", ["knife"])]
B_EVENTS = [(20, 40, "crack", ["egg"]), (63, 90, "pour", ["bowl"]), (200, 222, "open", ["fridge"])]
ATTESTATION = "I labelled every action in this video alone and without seeing other labels."


def as_data(event):
    start, end, verb, nouns = event
    return {"verb": verb, "nouns": sorted(nouns), "start_frame": start, "end_frame": end}


def annotate(page, events, *, table) -> None:
    """Add ``events`` by keyboard; afterwards the ledger table must list exactly ``table``."""
    for event in events:
        add_action_by_keyboard(page, *event)
        wait_saved(page)
    rows = ledger_rows(page)
    assert [(int(r[1]), int(r[2])) for r in rows] == [(e[0], e[1]) for e in sorted(table)]
    assert all(r[4] == "saved" for r in rows)


def freeze(page) -> str:
    page.click("#freeze-open")
    page.fill("#attestation", ATTESTATION)
    page.click("#freeze-confirm")
    page.wait_for_selector("#frozen-banner:not([hidden])")
    sha = page.inner_text("#frozen-sha").strip()
    assert len(sha) == 64
    # Read-only: the form cannot be used and the keys change nothing.
    assert page.locator("#ev-start_frame").is_disabled()
    page.locator("#workspace").focus()
    page.keyboard.press("i")
    page.keyboard.press("Delete")
    assert page.evaluate("window.frameledger.store.getState().pending.length") == 0
    return sha


class Wiretap:
    """Every HTTP response body and websocket frame one page receives, read as it arrives."""

    TEXT_TYPES = ("json", "html", "javascript", "css", "text")

    def __init__(self, page):
        self.bodies: list[tuple[str, str]] = []
        self.unreadable: list[str] = []
        page.on("response", self._response)
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        self.bodies.append(("websocket", str(payload)))

    def _response(self, response) -> None:
        kind = response.headers.get("content-type", "")
        if response.status in (204, 304) or 300 <= response.status < 400:
            return
        if not any(t in kind for t in self.TEXT_TYPES):
            # Binary bodies may only be the packet's own video, frames and thumbnails.
            if "/media/packets/" not in response.url:
                self.unreadable.append(f"{response.url} ({kind})")
            return
        try:
            self.bodies.append((response.url, response.text()))
        except Exception as exc:  # an unchecked body must fail the test, not pass it
            self.unreadable.append(f"{response.url}: {exc}")


def markers_of(ledger: Ledger, username: str, *, own: Ledger) -> list[str]:
    """Strings that appear only if something of ``ledger`` leaked to the owner of ``own``.

    An event both annotators made identically is not a marker: it is the viewer's own too.
    """
    marks = [username, f"ledger-{ledger.pk}-v"]
    if ledger.sha256:
        marks.append(ledger.sha256)
    own_data = [e.data for e in own.events.all()]
    for event in ledger.events.all():
        marks.append(str(event.uid))
        if event.data not in own_data:
            marks.append(json.dumps(event.data, separators=(",", ":")))
            marks.append(json.dumps(event.data))
    return marks


def test_the_whole_protocol_blind_keyboard_adjudicated_published_and_exported(
    page_as, media_packet, annotator_a, annotator_b, adjudicator, maintainer
):
    packet = media_packet(VIDEO)
    page_a = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page_a)
    page_b = page_as(annotator_b, "/login/")  # a page without scripts: tap from the first request on
    tap_b = Wiretap(page_b)
    page_b.goto(page_b.url.replace("/login/", f"/packets/{packet.pk}/"))
    wait_ready(page_b)

    # --- A and B annotate, interleaved, with the keyboard only ---------------------
    annotate(page_a, A_EVENTS[:2], table=A_EVENTS[:2])
    annotate(page_b, B_EVENTS[:2], table=B_EVENTS[:2])
    annotate(page_a, A_EVENTS[2:], table=A_EVENTS)
    annotate(page_b, B_EVENTS[2:], table=B_EVENTS)

    # Clicking an event (here: a table row) seeks the player to its start frame.
    page_a.click("#ledger-table tbody tr:nth-child(2)")
    wait_frame(page_a, 60)
    assert page_a.input_value("#ev-start_frame") == "60"
    screenshot(page_a, "annotator-workspace.png")

    ledger_a = Ledger.objects.get(packet=packet, side="A")
    ledger_b = Ledger.objects.get(packet=packet, side="B")
    assert sorted(e.data["start_frame"] for e in ledger_a.events.all()) == [20, 60, 150]
    assert [as_data(e) for e in sorted(A_EVENTS)] == sorted(
        (e.data for e in ledger_a.events.all()), key=lambda d: d["start_frame"]
    )
    assert len(ledger_b.events.all()) == 3

    sha_a = freeze(page_a)
    ledger_a.refresh_from_db()
    assert ledger_a.sha256 == sha_a

    # B, after A froze: reload and look again; nothing of A's anywhere.
    page_b.reload()
    wait_ready(page_b)
    assert page_b.inner_text("#presence").strip() in {"", "you"}
    sha_b = freeze(page_b)
    ledger_b.refresh_from_db()
    assert ledger_b.sha256 == sha_b

    markers = markers_of(ledger_a, annotator_a.username, own=ledger_b)
    assert len(markers) == 2 + 1 + 3 + 2 * 2  # username, ledger id, SHA-256, 3 uids, 2 events of A's own
    leaks = []
    for url, body in tap_b.bodies:
        leaks += [(url, mark) for mark in markers if mark in body]
    assert tap_b.unreadable == []
    urls = [url for url, _ in tap_b.bodies]
    assert any(url.endswith(f"/api/packets/{packet.pk}/ledger/") for url in urls), "the tap saw no ledger responses"
    assert leaks == []
    dom_b = page_b.inner_text("body")
    assert not [mark for mark in markers if mark in dom_b]
    assert [(int(r[1]), int(r[2])) for r in ledger_rows(page_b)] == [(e[0], e[1]) for e in sorted(B_EVENTS)]

    # --- the adjudicator -----------------------------------------------------------------
    page_j = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page_j)
    statuses = page_j.eval_on_selector_all("#items-table tbody tr", "rows => rows.map(r => r.dataset.status)")
    assert statuses == ["agreed", "conflicting", "a_only", "b_only"]
    # The conflicting item shows its differing fields highlighted and the boundary delta.
    conflicting = page_j.locator("#items-table tbody tr[data-status=conflicting]")
    assert conflicting.locator(".differs").count() >= 2  # nouns on both sides (and start)
    assert "Δ start +3 frames" in conflicting.inner_text()
    assert "differs" in page_j.locator("#compare tr[data-field=nouns]").get_attribute("class")

    # Selecting an item seeks to it and plays it at 0.5x.
    conflicting.click()
    page_j.wait_for_function(
        "() => { const p = window.frameledger.player; return p.video.playbackRate === 0.5"
        " && p.currentFrame >= 60 && p.currentFrame <= 90; }"
    )
    screenshot(page_j, "adjudicator-view.png")

    # A decision needs a rationale: without one nothing is sent.
    page_j.locator("#adjudication").focus()
    page_j.keyboard.press("3")  # edit
    page_j.keyboard.press("Control+Enter")
    assert "rationale is required" in page_j.inner_text("#rationale-error")
    assert page_j.locator("#items-table tbody tr[data-status=conflicting] td.undecided").count() == 1

    # Edit: both nouns, A's start.
    page_j.fill("#fin-nouns", "bowl")
    page_j.press("#fin-nouns", "Enter")
    page_j.fill("#rationale", "Frame 60 shows the pour starting; milk goes into the bowl.")
    page_j.locator("#adjudication").focus()
    page_j.keyboard.press("Control+Enter")
    page_j.wait_for_selector("#items-table tbody tr[data-status=conflicting] td.decided")

    # The page moved on to the A-only item: take A.
    page_j.wait_for_function("document.querySelector('#item-title').textContent === 'Item 3'")
    page_j.keyboard.press("1")
    page_j.fill("#rationale", "The knife is picked up at frame 150.")
    page_j.keyboard.press("Control+Enter")
    page_j.wait_for_selector("#items-table tbody tr[data-status=a_only] td.decided")

    # B only: the video cannot settle it.
    page_j.wait_for_function("document.querySelector('#item-title').textContent === 'Item 4'")
    page_j.locator("#adjudication").focus()
    page_j.keyboard.press("5")
    page_j.fill("#rationale", "The fridge door is out of frame; cannot tell.")
    page_j.keyboard.press("Control+Enter")
    page_j.wait_for_selector("#items-table tbody tr[data-status=b_only] td.decided")
    assert page_j.inner_text("#progress-text").startswith("3 of 3 decided")

    page_j.click("#publish")
    page_j.wait_for_selector("#version-link")
    version = GroundTruthVersion.objects.get(packet=packet, tier="adjudicated")
    assert version.manifest["ledger_a_sha256"] == sha_a and version.manifest["ledger_b_sha256"] == sha_b
    page_j.click("#version-link")
    wait_ready(page_j)
    assert page_j.inner_text("#version-sha").strip() == version.sha256
    screenshot(page_j, "version-page.png")

    # --- the maintainer downloads the export and scores it -------------------------
    page_m = page_as(maintainer, f"/versions/{version.pk}/")
    wait_ready(page_m)
    with page_m.expect_download() as download:
        page_m.click("#download-zip")
    archive = zipfile.ZipFile(io.BytesIO(open(download.value.path(), "rb").read()))
    files = {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}
    assert {"gt.json", "oracle.json", "vocabulary.json", "manifest.json"} <= set(files)
    gt = json.loads(files["gt.json"])
    assert gt == {
        "actions": [
            as_data((20, 40, "crack", ["egg"])),
            as_data((60, 90, "pour", ["milk", "bowl"])),
            as_data((150, 170, "take", ["knife"])),
        ]
    }
    result = score_submission("egocentric-f1-v2", gt, files["oracle.json"], frame_count=FRAMES)
    assert result.reward == 1.0
    # The same scorer does tell a different ledger apart (B's frozen ledger scores lower).
    b_actions = {"actions": [as_data(e) for e in sorted(B_EVENTS)]}
    assert score_submission("egocentric-f1-v2", gt, json.dumps(b_actions).encode(), frame_count=FRAMES).reward < 1.0
    manifest = json.loads(files["manifest.json"])
    assert manifest["version"]["sha256"] == version.sha256
    assert manifest["manifest"]["unresolved"][0]["b_value"] == as_data(B_EVENTS[2])
