"""The browser scenario of ``bench/ui_scale.py`` (run through pytest for its fixtures: live
server, database, Chromium). Not collected by the suite (no ``test_`` file name): it only
measures and writes figures; nothing here asserts a time.

A workspace whose ledger holds 2,000 action events (the egocentric cap) over the GTEA
video's 25,692 frames, and an adjudication page over the union of two such ledgers (B
is A with boundary wobbles within the tolerance for about 70 %, other labels for about
20 %, and the rest one-sided). The video rows have no media files, so the players are
the page's stand-ins: the figures are the page's own work (DOM, layout, paint), the
frame decoder left out.
"""

from __future__ import annotations

import json
import os
import random
import statistics

import pytest

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.base.builtin_kinds import GTEA_NOUNS, GTEA_VERBS
from annotator.models import Ledger
from tests.browser.ledger_pages import wait_painted, wait_ready
from tests.browser.real_keys import press_key, type_keys
from tests.factories import make_packet, make_ready_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EVENTS = int(os.environ.get("FRAMELEDGER_UI_SCALE_EVENTS", "2000"))
FRAMES = 25692

# Records when the page says it is ready, and every long task (> 50 ms).
PROBE = """
(() => {
  const box = {};
  let ready = false;
  Object.defineProperty(window, "frameledger", {
    configurable: true,
    get() { return box; },
    set(value) { Object.assign(box, value); },
  });
  Object.defineProperty(box, "ready", {
    configurable: true,
    get() { return ready; },
    set(value) { ready = value; if (value && !window.__readyAt) window.__readyAt = performance.now(); },
  });
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push([entry.startTime, entry.duration]);
  }).observe({ type: "longtask", buffered: true });
  // Time from a keydown to the first frame painted after it.
  window.__keyToPaint = [];
  document.addEventListener("keydown", () => {
    const t0 = performance.now();
    requestAnimationFrame(() => setTimeout(() => window.__keyToPaint.push(performance.now() - t0), 0));
  }, true);
})();
"""


def events(rng: random.Random, count: int) -> list[dict]:
    out = []
    step = (FRAMES - 100) // count
    for i in range(count):
        start = i * step + rng.randrange(0, max(1, step // 4))
        out.append(
            {
                "verb": rng.choice(GTEA_VERBS),
                "nouns": sorted(rng.sample(GTEA_NOUNS, rng.choice((1, 1, 2)))),
                "start_frame": start,
                "end_frame": start + rng.randrange(5, max(6, step - step // 4)),
            }
        )
    return out


def fill(ledger: Ledger, rows: list[dict], actor) -> None:
    for version, data in enumerate(rows):
        do_add_event(ledger, data, actor=actor, expected_version=version)


def wobble(rng: random.Random, rows: list[dict]) -> list[dict]:
    out = []
    for data in rows:
        roll = rng.random()
        if roll < 0.7:
            start = max(0, data["start_frame"] + rng.randint(-6, 6))
            end = max(start + 1, data["end_frame"] + rng.randint(-6, 6))
            out.append({**data, "start_frame": start, "end_frame": end})
        elif roll < 0.9:
            other = [v for v in GTEA_VERBS if v != data["verb"]]
            out.append({**data, "verb": rng.choice(other)})
        # else: A only
    return out


def open_probed(page_as, user, path: str):
    """The page, loaded a second time with the probe in place (and a warm server)."""
    page = page_as(user, path)
    wait_ready(page, timeout=120000)
    page.add_init_script(PROBE)
    page.reload()
    wait_ready(page, timeout=120000)
    return page


# Ctrl+Enter keydown -> the item's row shows the decision and a frame is painted.
WATCH_DECISION = """(p) => { window.__decision = new Promise((resolve) => {
  let t0 = null;
  const onKey = (e) => {
    if (!(e.key === "Enter" && e.ctrlKey)) return;
    t0 = performance.now();
    document.removeEventListener("keydown", onKey, true);
  };
  document.addEventListener("keydown", onKey, true);
  const done = () => document.querySelector(`#items-table tr[data-position="${p}"] td.decided`);
  const observer = new MutationObserver(() => {
    if (t0 === null || !done()) return;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => {
      const request = performance.getEntriesByType("resource").filter((e) => e.name.includes("/decision/")).pop();
      resolve([performance.now() - t0, request ? request.duration : null]);
    }, 0));
  });
  observer.observe(document.querySelector("#items-table"), { childList: true, subtree: true, attributes: true });
}); }"""


def longest_task_since(page, t0: float) -> float:
    tasks = page.evaluate("(t0) => window.__longTasks.filter(([s]) => s >= t0).map(([, d]) => d)", t0)
    return max(tasks, default=0.0)


def scroll_and_zoom(page, box: str) -> float:
    t0 = page.evaluate("performance.now()")
    for _ in range(25):
        page.evaluate(
            "(sel) => new Promise((r) => { document.querySelector(sel).scrollTop += 400;"
            " requestAnimationFrame(() => requestAnimationFrame(r)); })",
            box,
        )
    for key in ["+", "+", "+", "+", "+", "-", "-", "-", "-", "-", "0"]:
        press_key(page, key)
        page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return longest_task_since(page, t0)


def test_ui_scale(page_as, maintainer, annotator_a, annotator_b, adjudicator):
    rng = random.Random(17)
    figures = {"events": EVENTS}

    # ---- workspace: 2,000 events ----------------------------------------------------
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("scale ws"))
    fill(Ledger.objects.get(packet=packet, side="A"), events(rng, EVENTS), annotator_a)
    page = open_probed(page_as, annotator_a, f"/packets/{packet.pk}/")
    figures["workspace_usable_ms"] = page.evaluate("window.__readyAt")
    figures["workspace_longest_load_task_ms"] = longest_task_since(page, 0)
    page.locator("#workspace").focus()
    page.keyboard.press("End")
    page.keyboard.press("Home")
    for _ in range(5):
        page.keyboard.press("]")
    page.wait_for_function("() => document.querySelector('#ledger-table tbody tr.selected')")
    page.wait_for_function("() => !window.frameledger.player.seeking")
    wait_painted(page)  # the keys so far have painted (and been timed) before the count restarts
    page.evaluate("window.__keyToPaint = []")
    for i in range(20):
        press_key(page, "." if i % 2 == 0 else ",")
        page.wait_for_function("(n) => window.__keyToPaint.length >= n", arg=i + 1)  # this key painted
    page.wait_for_function("() => !window.frameledger.player.seeking")
    nudges = page.evaluate("window.__keyToPaint")
    figures["nudge_key_to_paint_ms"] = {"median": statistics.median(nudges), "max": max(nudges), "n": len(nudges)}
    box = "#ledger-scroll" if page.query_selector("#ledger-scroll") else "html"
    figures["workspace_longest_task_scroll_zoom_ms"] = scroll_and_zoom(page, box)

    # ---- adjudication: the union of two 2,000-event ledgers ---------------------------
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=make_ready_video("scale union"))
    a_rows = events(rng, EVENTS)
    for side, actor, rows in (("A", annotator_a, a_rows), ("B", annotator_b, wobble(rng, a_rows))):
        ledger = Ledger.objects.get(packet=packet, side=side)
        fill(ledger, rows, actor)
        do_freeze_ledger(ledger, actor=actor, attestation="I labelled this video alone.", expected_version=len(rows))
    union = do_build_union(packet, actor=adjudicator)
    figures["union_items"] = union.items.count()
    page = open_probed(page_as, adjudicator, f"/packets/{packet.pk}/")
    figures["adjudication_usable_ms"] = page.evaluate("window.__readyAt")
    figures["adjudication_longest_load_task_ms"] = longest_task_since(page, 0)
    page.locator("#adjudication").focus()
    times, requests = [], []
    for _ in range(10):
        position = page.evaluate("Number(document.querySelector('#item-title').textContent.replace('Item ', '')) - 1")
        page.keyboard.press("4")  # drop: open to every item
        page.keyboard.press("r")
        type_keys(page, "Cannot tell.")
        page.evaluate(WATCH_DECISION, position)
        page.keyboard.press("Control+Enter")
        total, request = page.evaluate("window.__decision")
        times.append(total)
        requests.append(request or 0.0)
        page.locator("#adjudication").focus()
    figures["decision_to_paint_ms"] = {"median": statistics.median(times), "max": max(times), "n": len(times)}
    figures["decision_request_ms"] = {"median": statistics.median(requests), "max": max(requests), "n": len(requests)}
    box = "#items-scroll" if page.query_selector("#items-scroll") else "html"
    figures["adjudication_longest_task_scroll_zoom_ms"] = scroll_and_zoom(page, box)

    out = os.environ.get("FRAMELEDGER_UI_SCALE_FIGURES")
    if out:
        with open(out, "w") as handle:
            json.dump(figures, handle)
