"""The whole blind two-annotator protocol in real headless Chromium, through the pages.

Annotators A and B (separate browser contexts) each create their events with the
keyboard only; every response body and websocket frame B's browser receives, and B's
page text, are checked for anything of A's; both freeze; the adjudicator (a third
context) resolves every item and publishes; the maintainer downloads the export zip
from the version page and it scores 1.0 against itself with the project's scorer.
The protocol runs against Daphne (``tests/browser/asgi_server.py``) so the websockets
are live too; the other tests here use pytest-django's WSGI live server.
"""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.models import GroundTruthVersion, Job, Ledger, Packet
from scoring import score_submission
from tests.browser import asgi_server as asgi
from tests.browser.ledger_pages import (
    add_action_by_keyboard,
    go_to_frame,
    ledger_rows,
    screenshot,
    wait_frame,
    wait_ready,
    wait_saved,
)
from tests.browser.real_keys import press_key, type_keys
from tests.factories import make_packet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The ASGI server fixtures (tests/browser/asgi_server.py: uvicorn, as bin/run-demo runs it).
asgi_server = asgi.asgi_server
open_as = asgi.open_as

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

    TEXT_TYPES = ("json", "html", "javascript", "css", "text", "svg")  # svg: the favicon, read like any text

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
    open_as, media_packet, annotator_a, annotator_b, adjudicator, maintainer
):
    packet = media_packet(VIDEO)
    page_a = open_as(annotator_a, f"/packets/{packet.pk}/")
    taps = []
    page_b = open_as(annotator_b, f"/packets/{packet.pk}/", before=lambda page: taps.append(Wiretap(page)))
    (tap_b,) = taps

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
    # A's page is open too; B's presence says only "you".
    page_b.wait_for_selector("#presence .presence-chip")
    assert page_b.inner_text("#presence").strip() == "you"
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
    assert "websocket" in urls, "the tap saw no websocket frames"  # B's presence socket was live
    assert leaks == []
    dom_b = page_b.inner_text("body")
    assert not [mark for mark in markers if mark in dom_b]
    assert [(int(r[1]), int(r[2])) for r in ledger_rows(page_b)] == [(e[0], e[1]) for e in sorted(B_EVENTS)]

    # --- the adjudicator -----------------------------------------------------------------
    page_j = open_as(adjudicator, f"/packets/{packet.pk}/")
    statuses = page_j.eval_on_selector_all("#items-table tbody tr", "rows => rows.map(r => r.dataset.status)")
    assert statuses == ["agreed", "conflicting", "a_only", "b_only"]
    # The conflicting item shows its differing fields highlighted and the boundary delta.
    conflicting = page_j.locator("#items-table tbody tr[data-status=conflicting]")
    assert conflicting.locator(".differs").count() >= 2  # nouns on both sides (and start)
    assert "Δ start +3" in conflicting.inner_text()  # in frames, as the column's heading says
    assert "Δ start +3 frames" in conflicting.locator("td[title*='Δ start']").get_attribute("title")
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
    page_j.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 3'")
    page_j.keyboard.press("1")
    page_j.fill("#rationale", "The knife is picked up at frame 150.")
    page_j.keyboard.press("Control+Enter")
    page_j.wait_for_selector("#items-table tbody tr[data-status=a_only] td.decided")

    # B only: the video cannot settle it.
    page_j.wait_for_function("() => document.querySelector('#item-title').textContent === 'Item 4'")
    page_j.locator("#adjudication").focus()
    page_j.keyboard.press("5")
    page_j.fill("#rationale", "The fridge door is out of frame; cannot tell.")
    page_j.keyboard.press("Control+Enter")
    page_j.wait_for_selector("#items-table tbody tr[data-status=b_only] td.decided")
    assert page_j.inner_text("#progress-text").startswith("3 of 3 decided")

    page_j.click("#publish")
    page_j.wait_for_selector("#publish-dialog[open]")  # the confirmation first
    page_j.click("#publish-confirm")
    page_j.wait_for_selector("#version-link")
    version = GroundTruthVersion.objects.get(packet=packet, tier="adjudicated")
    assert version.manifest["ledger_a_sha256"] == sha_a and version.manifest["ledger_b_sha256"] == sha_b
    page_j.click("#version-link")
    wait_ready(page_j)
    assert page_j.inner_text("#version-sha").strip() == version.sha256
    screenshot(page_j, "version-page.png")

    # --- the maintainer downloads the export and scores it -------------------------
    page_m = open_as(maintainer, f"/versions/{version.pk}/")
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


def test_keyboard_navigation_nudges_undo_redo_delete_and_the_shortcut_sheet(page_as, media_packet, annotator_a):
    packet = media_packet(VIDEO)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    add_action_by_keyboard(page, 30, 50, "take", ["cup"])
    add_action_by_keyboard(page, 100, 120, "put", ["cup"])
    wait_saved(page)
    ledger = Ledger.objects.get(packet=packet, side="A")

    def spans():
        return sorted((e.data["start_frame"], e.data["end_frame"]) for e in ledger.events.all())

    press_key(page, "?")
    page.wait_for_selector("#help-dialog[open]")
    assert "nudge the selected boundary" in page.inner_text("#help-dialog")
    page.keyboard.press("Escape")
    page.wait_for_selector("#help-dialog:not([open])", state="attached")

    page.locator("#workspace").focus()
    page.keyboard.press("Home")
    page.keyboard.press("]")  # next event: seeks to its start
    wait_frame(page, 30)
    page.keyboard.press("]")
    wait_frame(page, 100)
    page.keyboard.press("[")
    wait_frame(page, 30)
    page.keyboard.press("b")  # the end boundary
    page.keyboard.press(".")
    page.keyboard.press(".")
    wait_frame(page, 52)  # a nudge shows the boundary's new frame
    wait_saved(page)
    assert spans() == [(30, 52), (100, 120)]
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    wait_saved(page)
    assert spans() == [(30, 50), (100, 120)]
    page.keyboard.press("Control+Shift+z")
    wait_saved(page)
    assert spans() == [(30, 51), (100, 120)]
    page.keyboard.press("Delete")
    wait_saved(page)
    assert spans() == [(100, 120)]
    page.keyboard.press("Control+z")
    wait_saved(page)
    assert spans() == [(30, 51), (100, 120)]

    # Clicking an event on the timeline seeks to its start and selects it.
    page.click(".tl-lane .tl-item:has-text('put')")
    wait_frame(page, 100)
    assert page.input_value("#ev-verb") == "put"
    assert page.get_attribute("#ledger-table tbody tr.selected", "data-key") is not None

    # h plays at half speed (and pauses again); + and 0 zoom the timeline.
    page.locator("#workspace").focus()
    page.keyboard.press("h")
    page.wait_for_function(
        "() => { const p = window.frameledger.player; return !p.paused && p.video.playbackRate === 0.5; }"
    )
    page.keyboard.press("h")
    page.wait_for_function("() => window.frameledger.player.paused")
    press_key(page, "+")
    assert page.inner_text(".tl-range") != f"frames 0–{FRAMES - 1} of {FRAMES}"
    page.keyboard.press("0")
    assert page.inner_text(".tl-range") == f"frames 0–{FRAMES - 1} of {FRAMES}"


def test_the_break_point_form_and_its_shot_token_editor_work_from_the_keyboard(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=ingest(VIDEO)
    )
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    form = page.locator("#event-form")
    assert form.locator("[data-field=shots] .token-add").count() == 1
    # Identity and summary fields: typed, and closed lists chosen with the keyboard.
    page.locator("#workspace").focus()
    page.keyboard.press("e")  # the first field: set
    for value in ("2", "3", "4"):  # set, medvedev_games, de_minaur_games
        type_keys(page, value)
        page.keyboard.press("Tab")
    for field, value in (
        ("medvedev_points", "30"),
        ("de_minaur_points", "40"),
        ("server", "Alex De Minaur"),
        ("first_serve_in", "true"),
        ("outcome", "saved"),
        ("serve_direction", "wide"),
        ("terminal_player", "Daniil Medvedev"),
        ("terminal_court_position", "baseline"),
        ("terminal_result", "unforced_error"),
    ):
        select = page.locator(f"#ev-{field}")
        select.focus()
        while select.input_value() != value:  # arrow keys walk a closed list
            page.keyboard.press("ArrowDown")
    page.locator("#ev-opportunity").fill("1")
    page.locator("#ev-rally_shots").fill("2")
    page.locator("#ev-terminal_stroke").fill("backhand gr")  # type-ahead: the only match
    page.locator("#ev-terminal_error").fill("net")
    # The shot tokens, from the keyboard: + token, then Alt+Enter adds one after the current.
    page.locator("[data-field=shots] .token-add").focus()
    page.keyboard.press("Enter")
    first_direction = page.locator("[data-field=shots] .token-row >> nth=0").locator("select[name=direction]")
    assert (
        page.locator("[data-field=shots] .token-row >> nth=0").locator("select[name=stroke]").input_value() == "serve"
    )
    first_direction.focus()
    while first_direction.input_value() != "wide":
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Alt+Enter")
    page.keyboard.press("Alt+Enter")
    rows = page.locator("[data-field=shots] .token-row")
    assert rows.count() == 3
    for index, (stroke, direction) in enumerate(
        [("forehand_groundstroke", "middle"), ("backhand_groundstroke", "middle")]
    ):
        row = rows.nth(index + 1)
        row.locator("select[name=stroke]").select_option(stroke)
        row.locator("select[name=direction]").select_option(direction)
    # Alt+Up moves a token; moving it back restores the order.
    rows.nth(2).locator("select[name=stroke]").focus()
    page.keyboard.press("Alt+ArrowUp")
    assert rows.nth(1).locator("select[name=stroke]").input_value() == "backhand_groundstroke"
    page.keyboard.press("Alt+ArrowDown")
    assert rows.nth(2).locator("select[name=stroke]").input_value() == "backhand_groundstroke"
    # A consistency warning (three tokens, two rally shots, an error: fine) is absent;
    # with one token too many it appears.
    page.keyboard.press("Alt+Enter")
    page.locator("#ev-set").focus()
    page.keyboard.press("Tab")
    assert "shot token" in page.inner_text("#form-warnings")
    rows.nth(3).locator("select[name=stroke]").focus()
    page.keyboard.press("Alt+Backspace")
    page.locator("#ev-set").dispatch_event("change")
    assert page.inner_text("#form-warnings") == ""
    page.locator("#workspace").focus()
    page.keyboard.press("Control+Enter")
    wait_saved(page)
    (event,) = Ledger.objects.get(packet=packet, side="A").events.all()
    assert event.data["shots"] == [
        {"stroke": "serve", "direction": "wide"},
        {"stroke": "forehand_groundstroke", "direction": "middle"},
        {"stroke": "backhand_groundstroke", "direction": "middle"},
    ]
    assert (event.data["set"], event.data["server"], event.data["terminal_stroke"]) == (
        2,
        "Alex De Minaur",
        "backhand_groundstroke",
    )


def test_a_maintainer_uploads_a_video_watches_the_ingest_and_assigns_three_different_people(
    page_as, synthetic_source, maintainer, annotator_a, annotator_b, adjudicator, monkeypatch
):
    from django.db import connection

    from annotator.base import queue
    from annotator.entry import tasks

    shown, early_shown = threading.Event(), threading.Event()

    class Worker:
        """Stands in for the Celery worker process: the real ingest, in another thread."""

        @staticmethod
        def send(name, args):
            if name == queue.INGEST_PROXY:
                return proxy_work(*args)
            if name != queue.INGEST_VIDEO:  # the chunks of a long source: encoded right here
                return {queue.INGEST_CHUNK: tasks.ingest_chunk, queue.INGEST_JOIN: tasks.ingest_join}[name](*args)
            video_id, job_id = args

            def work():
                try:
                    # A first step that lasts until the page has shown it: the small test
                    # video ingests in well under a poll interval otherwise.
                    Job.objects.filter(pk=job_id).update(status="running", progress=0.42, message="Hashing (slowly).")
                    shown.wait(timeout=30)
                    tasks.ingest_video(video_id, job_id)
                finally:
                    connection.close()

            threading.Thread(target=work, daemon=True).start()

    def proxy_work(video_id, job_id, chunk_frames=None):
        """The proxy task after the remux (annotate first), held until the page has shown
        that the video is ready on its remux."""

        def work():
            try:
                early_shown.wait(timeout=30)
                tasks.ingest_proxy(video_id, job_id, chunk_frames)
            finally:
                connection.close()

        threading.Thread(target=work, daemon=True).start()

    monkeypatch.setattr(queue, "send", Worker.send)
    page = page_as(maintainer, "/maintainer/packets/new/")
    wait_ready(page)
    page.fill("#video-title", "barcode 29.97")
    page.set_input_files("#video-file", str(synthetic_source(VIDEO)))
    page.click("#upload")
    page.wait_for_function("() => (window.frameledger.ingestStates || []).some((s) => s.progress === 0.42)")
    assert page.inner_text("#ingest-percent") == "42%"
    shown.set()
    # Annotate first: the packet step opens while the proxy is still to be made.
    page.wait_for_function("() => document.querySelector('#ingest-video').textContent.includes('on its remux')")
    assert page.get_attribute("#step-packet", "aria-disabled") == "false"
    assert page.get_attribute("#step-ingest", "data-status") == "running"
    early_shown.set()
    page.wait_for_selector("#step-ingest[data-status=done]", timeout=60000)
    progress_seen = page.evaluate("window.frameledger.ingestStates.map((s) => s.progress)")
    assert 0.42 in progress_seen and progress_seen[-1] == 1 and page.inner_text("#ingest-percent") == "100%"
    assert f"{FRAMES} frames" in page.inner_text("#ingest-video")

    page.select_option("#task-kind-select", "action-ledger")
    page.select_option("#annotator-a", "annotator_a")
    page.select_option("#annotator-b", "annotator_a")
    page.select_option("#adjudicator", "adjudicator")
    page.click("#create-packet")
    assert "three different people" in page.inner_text("#packet-error")
    page.select_option("#annotator-b", "annotator_b")
    page.fill("#instructions-input", "Label every action.")
    page.click("#create-packet")
    page.wait_for_url(re.compile(r"/packets/\d+/$"))
    wait_ready(page)
    packet = Packet.objects.get()
    assert (packet.annotator_a, packet.annotator_b, packet.adjudicator) == (annotator_a, annotator_b, adjudicator)
    assert page.inner_text("#assign-b") == "annotator_b"
    assert [r.split("\t")[:3] for r in page.locator("#ledgers tbody tr").all_inner_texts()] == [
        ["A", "annotator_a", "0"],
        ["B", "annotator_b", "0"],
    ]
    page.goto(page.url + "audit/")
    wait_ready(page)
    assert "create_packet" in page.inner_text("#audit")


def test_the_adjudicator_waits_for_both_freezes_and_is_shown_only_their_state(
    page_as, packet, annotator_a, adjudicator
):
    ledger_a = Ledger.objects.get(packet=packet, side="A")
    do_add_event(ledger_a, as_data(A_EVENTS[0]), actor=annotator_a, expected_version=0)
    do_freeze_ledger(ledger_a, actor=annotator_a, attestation=ATTESTATION, expected_version=1)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    assert page.get_attribute("#adjudication", "data-state") == "waiting"
    text = page.inner_text("#waiting")
    assert "Waiting for both ledgers to freeze (A: frozen, B: not frozen yet)" in text
    # Only the waiting state: no empty player, timeline or items cards.
    assert not page.is_visible(".adj-grid") and not page.is_visible("#items-table")
    assert ledger_a.sha256 not in page.inner_text("body") and "crack" not in page.inner_text("body")


def test_moment_queries_mark_grid_snapped_intervals_with_i_and_o(
    page_as, ingest, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=ingest(VIDEO))
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#workspace").focus()
    for frame, key in ((60, "i"), (125, "o"), (180, "i"), (239, "o")):  # 2.002 s, 4.17 s, 6.006 s, 7.97 s
        go_to_frame(page, frame)
        press_key(page, key)
    page.wait_for_function("() => document.querySelectorAll('[data-field=intervals] .interval-row').length === 2")
    page.keyboard.press("e")  # the first field: query_id
    type_keys(page, "q1")
    page.keyboard.press("Tab")
    type_keys(page, "a person cracks an egg")
    page.keyboard.press("Enter")  # in the query text: adds the event
    wait_saved(page)
    (event,) = Ledger.objects.get(packet=packet, side="A").events.all()
    assert event.data == {"query_id": "q1", "query": "a person cracks an egg", "intervals": [[2.0, 4.0], [6.0, 8.0]]}
