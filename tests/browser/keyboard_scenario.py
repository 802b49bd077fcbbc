"""The keyboard scenario of issue 17, shared by its test and ``bench/keyboard.py``.

From a cold start (page just loaded, player at frame 0, focus on the page), an annotator
adds 5 action events at given frames, then 3 tennis break points and 3 moment intervals,
with the keyboard only. Every key is counted (a typed character is one key), seeking
keys included; the counts per event are returned with what the server stored.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from tests.browser.ledger_pages import wait_saved
from tests.browser.real_keys import RealKeyboard


class CountingKeyboard:
    """A real keyboard (real_keys.py: a capital is Shift down, the letter, Shift up; keys
    30-50 ms apart), counting keys: press = 1, type(text) = len(text). A chord such as
    Shift+I is one key, as the annotator counts it."""

    def __init__(self, page):
        self.page = page
        self.keys = RealKeyboard(page)
        self.count = 0
        self.typed: list[str] = []  # what was typed, for a failure's message

    def press(self, key: str) -> None:
        self.count += 1
        self.typed.append(f"<{key}>")
        self.keys.press(key)

    def type(self, text: str) -> None:
        self.count += len(text)
        self.typed.append(text)
        self.keys.type(text)


@dataclass
class Tally:
    rows: list[tuple[str, str, int]] = field(default_factory=list)  # (family, event, keys)

    def keys(self, family: str) -> list[int]:
        return [n for f, _, n in self.rows if f == family]

    def summary(self, family: str) -> dict:
        keys = self.keys(family)
        return {"events": len(keys), "median": statistics.median(keys), "max": max(keys), "min": min(keys)}


# The published GTEA labels of the demo video (as adjudication_scenario.py reads them).
LABELS = (
    Path(__file__).resolve().parents[2]
    / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"
)


# Action events at real frame numbers, drawn across the whole 25,692-frame GTEA video
# (frames 120-25,000): the published labels of the demo video, sorted by start, in 5 runs
# of 2 consecutive events spread evenly over the video (the second of a run starts a few
# frames after the first ends, as an annotator goes on), events of at most two nouns.
def gtea_action_events() -> list[tuple[int, int, str, list[str]]]:
    from annotator.base.gtea import parse_gtea_labels

    rows = sorted(
        (e["start_frame"], e["end_frame"], e["verb"], e["nouns"])
        for e in parse_gtea_labels(LABELS.read_text())
        if len(e["nouns"]) <= 2 and 120 <= e["start_frame"] and e["end_frame"] <= 25000
    )
    picks = []
    for k in range(5):
        i = k * (len(rows) - 2) // 4
        picks += rows[i : i + 2]
    return picks


ACTION_EVENTS = gtea_action_events()

# The fewest keys for a choice of a type-ahead box, with the page's own rules
# (event_schema.js, ranked by this ledger's use of each value as the page ranks them):
# the shortest prefix of the name or of its words' starts ("mc": milk container) whose
# best candidate is the choice, then Enter (or ","); or, where the box takes a choice at
# once (a closed list: the verb), the shortest such text only that choice fits ("tof":
# turn off), with no Enter.
FEWEST_JS = """async ([field, choices, choice, atOnce, taken]) => {
  const S = await import("/static/frontend/js/event_schema.js");
  const L = await import("/static/frontend/js/ledger_state.js");
  const usage = S.usageCounts(L.events(window.frameledger.store.getState()).map((e) => e.data), field);
  const norm = (s) => String(s).toLowerCase().replace(/[\\s_-]+/g, " ");
  const left = choices.filter((c) => !taken.includes(c));
  const name = choice.replace(/_/g, " ");
  const texts = [];
  for (let n = 1; n <= name.length; n++) texts.push(name.slice(0, n));
  // Word starts ("mc": milk container, "tof": turn off): each word's first 1-3 letters,
  // and the beginnings of those.
  const words = norm(name).trim().split(" ");
  const starts = (w) =>
    w === words.length
      ? [""]
      : [1, 2, 3]
          .filter((n) => n <= words[w].length)
          .flatMap((n) => starts(w + 1).map((r) => words[w].slice(0, n) + r));
  for (const t of starts(0)) for (let n = 2; n <= t.length; n++) texts.push(t.slice(0, n));
  texts.sort((a, b) => a.length - b.length);
  for (const text of texts) {
    if (atOnce && S.atOnce(left, text)?.[0] === choice) return [text, false];
    if (S.bestChoice(left, text, usage) === choice) return [text, true];
  }
  return [name, true];
}"""


def fewest(page, field: str, choice: str, *, at_once: bool, taken: list[str] = ()) -> tuple[str, bool]:
    """(text to type, whether Enter / "," must follow) for ``choice`` of ``field``."""
    choices = page.evaluate(
        "(name) => window.frameledger.form.schema.fields.find((f) => f.name === name).choices", field
    )
    text, confirm = page.evaluate(FEWEST_JS, [field, choices, choice, at_once, list(taken)])
    return text, confirm


# What the page shows when an event did not arrive: rows, notice, field errors, draft, focus.
SHOWN_JS = """() => {
    const form = document.querySelector('#event-form');
    const boxes = [...form.querySelectorAll('[data-field]')];
    const active = document.activeElement;
    return {
        rows: document.querySelectorAll('#ledger-table tbody tr').length,
        notice: document.querySelector('#notice')?.textContent,
        errors: Object.fromEntries(boxes.map((b) => [b.dataset.field, b.querySelector('.field-error')?.textContent])),
        draft: Object.fromEntries([...form.querySelectorAll('[name]')].map((e) => [e.name, e.value])),
        focus: active && (active.id || active.name || active.tagName),
    };
}"""


def wait_added(page, count: int) -> None:
    """The page holds ``count`` events and has saved them all (on a time-out, the failure
    says what the page showed: its notice, the draft and the focused element)."""
    try:
        page.wait_for_function("(n) => document.querySelectorAll('#ledger-table tbody tr').length === n", arg=count)
    except Exception as error:
        shown = page.evaluate(SHOWN_JS)
        raise AssertionError(f"expected {count} events in the table; the page showed {shown}") from error
    wait_saved(page)


def mark_start(kb: CountingKeyboard, frame: int, current: int) -> None:
    """The fewest keys to mark the start at ``frame`` from the playhead at ``current``:
    "i" there, a step or two, the frames ahead ("34I"), or the frame typed ("1290i")."""
    delta = frame - current
    options = [f"{frame}i"]
    if delta > 0:
        options.append(f"{delta}I")
    if 0 <= delta <= 2:
        options.append("→" * delta + "i")
    best = min(options, key=len)
    for _ in range(best.count("→")):
        kb.press("ArrowRight")
    kb.type(best.replace("→", ""))


def mark_end(kb: CountingKeyboard, frame: int, start: int) -> None:
    """The end: the frames after the start ("32O"), or the frame typed ("12052o")."""
    kb.type(min(f"{frame - start}O", f"{frame}o", key=len))


def action_events(page, tally: Tally, events=None) -> None:
    kb = CountingKeyboard(page)
    page.locator("#workspace").focus()
    for start, end, verb, nouns in events or ACTION_EVENTS:
        kb.count = 0
        page.wait_for_function("() => !window.frameledger.player.seeking")
        current = page.evaluate("window.frameledger.player.currentFrame")  # where the last save left it
        mark_start(kb, start, current)
        mark_end(kb, end, start)
        # Both ends marked: the focus is in the verb box, as the annotator sees.
        page.wait_for_function(
            "([s, e]) => document.querySelector('#ev-start_frame').value === String(s)"
            " && document.querySelector('#ev-end_frame').value === String(e)"
            " && document.activeElement.id === 'ev-verb'",
            arg=[start, end],
        )
        text, confirm = fewest(page, "verb", verb, at_once=True)
        if page.evaluate("window.frameledger.form.offered('verb')") == verb:
            # The event before has this verb: the empty box names it, Enter takes it.
            page.wait_for_function(
                "(v) => document.querySelector('#ev-verb').closest('.typeahead')"
                ".querySelector('.typeahead-hint').textContent.startsWith(`Enter: ${v},`)",
                arg=verb,
            )
            kb.press("Enter")
        else:
            kb.type(text)
            if confirm:
                kb.press("Enter")  # takes the highlighted verb, moves to the nouns
        page.wait_for_function("() => document.activeElement.id === 'ev-nouns'")
        for i, noun in enumerate(nouns):
            text, _ = fewest(page, "nouns", noun, at_once=False)
            kb.type(text)
            kb.press("Enter" if i == len(nouns) - 1 else ",")  # ",": a chip, then the next; Enter: and save
        wait_added(page, len(tally.keys("actions")) + 1)
        tally.rows.append(("actions", f"{start}-{end}", kb.count))
        if os.environ.get("FRAMELEDGER_KEYBOARD_KEYS"):
            print("keys", start, end, kb.count, "".join(kb.typed))
        kb.typed = []


# Break points: (set, games M, games DM, points M, points DM, server key, opportunity,
# first serve in key, outcome key, serve direction key, rally shots, terminal player key,
# terminal stroke, court position key, result key, terminal error, shot directions).
BG, FG = "backhand_groundstroke", "forehand_groundstroke"
TENNIS_EVENTS = [
    ("1", "2", "3", "3", "4", "d", "1", "y", "s", "w", "2", "d", BG, "b", "u", "net", ["w", "m", "m"]),
    ("2", "4", "4", "4", "a", "d", "1", "n", "s", "b", "0", "d", "serve", "s", "a", "none", ["b"]),
    ("3", "5", "6", "3", "4", "d", "2", "y", "c", "d", "1", "a", FG, "b", "w", "none", ["w", "r"]),
]


TYPE_AHEAD = {12: "terminal_stroke", 15: "terminal_error"}  # the break point's type-ahead boxes


def tennis_events(page, tally: Tally) -> None:
    kb = CountingKeyboard(page)
    for row in TENNIS_EVENTS:
        kb.count = 0
        page.locator("#workspace").focus()
        *scalars, directions = row
        kb.press("e")  # the first field: set
        for i, value in enumerate(scalars):
            if i in TYPE_AHEAD:
                # Type-ahead boxes (terminal stroke, terminal error): the shortest text only
                # that choice fits ("bg": backhand groundstroke), taken at once and on to the
                # next field; else the text, then Enter.
                text, confirm = fewest(page, TYPE_AHEAD[i], value, at_once=True)
                kb.type(text)
                if confirm:
                    kb.press("Enter")
                taken = "([n, v]) => document.querySelector(`#event-form [name=${n}]`).value === v"
                page.wait_for_function(taken, arg=[TYPE_AHEAD[i], value])
                continue
            name = page.evaluate("document.activeElement.name")
            kb.type(value)
            # A select or a one-digit box takes a key only one value starts with at once and
            # moves on ("d": Daniil Medvedev, a set's "2"); everything else moves on with Tab.
            if page.evaluate("document.activeElement.name") == name:
                kb.press("Tab")
        # The shot tokens: Alt+Enter adds one (the serve first, its stroke fixed), then the
        # stroke's and the direction's first letters (f/b: forehand/backhand groundstroke).
        for k, direction in enumerate(directions):
            kb.press("Alt+Enter")
            if k:
                kb.type("f" if k % 2 else "b")
            kb.press("Tab")
            kb.type(direction)
        kb.press("Enter")
        wait_added(page, len(tally.keys("tennis")) + 1)
        tally.rows.append(("tennis", f"set {row[0]}", kb.count))


MOMENT_EVENTS = [
    (37, 62, "q1", "someone takes an egg"),
    (90, 150, "q2", "milk is poured"),
    (180, 239, "q3", "the fridge opens"),
]


def moment_events(page, tally: Tally) -> None:
    kb = CountingKeyboard(page)
    for start, end, query_id, query in MOMENT_EVENTS:
        kb.count = 0
        page.locator("#workspace").focus()
        kb.type(f"{start}i")
        kb.type(f"{end}o")
        # The end has landed in the draft (no interval row yet counts as not landed).
        page.wait_for_function("() => (document.querySelector('[name=intervals-end]')?.value ?? '') !== ''")
        kb.press("e")
        kb.type(query_id)
        kb.press("Tab")
        kb.type(query)
        kb.press("Enter")
        wait_added(page, len(tally.keys("moments")) + 1)
        tally.rows.append(("moments", query_id, kb.count))
