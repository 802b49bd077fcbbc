"""The keyboard scenario of issue 17, shared by its test and ``bench/keyboard.py``.

From a cold start (page just loaded, player at frame 0, focus on the page), an annotator
adds 5 action events at given frames, then 3 tennis break points and 3 moment intervals,
with the keyboard only. Every key is counted (a typed character is one key), seeking
keys included; the counts per event are returned with what the server stored.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from tests.browser.ledger_pages import wait_saved


class CountingKeyboard:
    """page.keyboard, counting keys: press = 1, type(text) = len(text)."""

    def __init__(self, page):
        self.page = page
        self.count = 0

    def press(self, key: str) -> None:
        self.count += 1
        self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.count += len(text)
        self.page.keyboard.type(text)


@dataclass
class Tally:
    rows: list[tuple[str, str, int]] = field(default_factory=list)  # (family, event, keys)

    def keys(self, family: str) -> list[int]:
        return [n for f, _, n in self.rows if f == family]

    def summary(self, family: str) -> dict:
        keys = self.keys(family)
        return {"events": len(keys), "median": statistics.median(keys), "max": max(keys), "min": min(keys)}


# (start, end, verb typed, nouns typed) on the 240-frame barcode video. The verb and the
# nouns are typed as far as the type-ahead needs to highlight the one meant (its best
# candidate: the exact choice, else the shortest prefix match, then word initials, then
# substrings), as an annotator reading its hint would. Two pairs are contiguous
# (40 / 41, 131 / 132), the others have gaps; one event has two nouns.
ACTION_EVENTS = [
    (12, 40, "t", ["e"]),  # take egg ("t": take, transfer, turn on, turn off)
    (41, 75, "cr", ["e"]),  # crack egg, right after the first one ("c" would be cut)
    (90, 131, "po", ["m", "b"]),  # pour milk bowl ("p" would be put; "b": bowl, bacon, bagel …)
    (132, 170, "m", ["em"]),  # mix egg_mixture, right after ("m": mix, move around; "em": initials)
    (200, 236, "o", ["fr"]),  # open fridge ("fr": fridge, freezer, fridge_drawer)
]


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


def seek_and_mark(kb: CountingKeyboard, frame: int, key: str, current: int) -> None:
    """The fewest keys to put a boundary at ``frame``: none, a step or two, else the frame typed."""
    delta = frame - current
    if 0 <= delta <= 2:
        for _ in range(delta):
            kb.press("ArrowRight")
        kb.press(key)
    else:
        kb.type(f"{frame}{key}")


def action_events(page, tally: Tally) -> None:
    kb = CountingKeyboard(page)
    page.locator("#workspace").focus()
    for start, end, verb, nouns in ACTION_EVENTS:
        kb.count = 0
        page.wait_for_function("() => !window.frameledger.player.seeking")
        current = page.evaluate("window.frameledger.player.currentFrame")  # where the last save left it
        seek_and_mark(kb, start, "i", current)
        seek_and_mark(kb, end, "o", start)
        # Both ends marked: the focus is in the verb box, as the annotator sees.
        page.wait_for_function(
            "([s, e]) => document.querySelector('#ev-start_frame').value === String(s)"
            " && document.querySelector('#ev-end_frame').value === String(e)"
            " && document.activeElement.id === 'ev-verb'",
            arg=[start, end],
        )
        kb.type(verb)
        kb.press("Enter")  # takes the highlighted verb, moves to the nouns
        for i, noun in enumerate(nouns):
            kb.type(noun)
            kb.press("Enter" if i == len(nouns) - 1 else ",")  # ",": a chip, then the next; Enter: and save
        wait_added(page, len(tally.keys("actions")) + 1)
        tally.rows.append(("actions", f"{start}-{end}", kb.count))


# Break points: (set, games M, games DM, points M, points DM, server key, opportunity,
# first serve in key, outcome key, serve direction key, rally shots, terminal player key,
# terminal stroke typed, court position key, result key, error typed, shot directions).
TENNIS_EVENTS = [
    ("1", "2", "3", "3", "4", "d", "1", "y", "s", "w", "2", "d", "backhand g", "b", "u", "net", ["w", "m", "m"]),
    ("2", "4", "4", "4", "a", "d", "1", "n", "s", "b", "0", "d", "serve", "s", "a", "none", ["b"]),
    ("3", "5", "6", "3", "4", "d", "2", "y", "c", "d", "1", "a", "forehand g", "b", "w", "none", ["w", "r"]),
]


def tennis_events(page, tally: Tally) -> None:
    kb = CountingKeyboard(page)
    for row in TENNIS_EVENTS:
        kb.count = 0
        page.locator("#workspace").focus()
        *scalars, directions = row
        kb.press("e")  # the first field: set
        for i, value in enumerate(scalars):
            kb.type(value)
            # Type-ahead boxes (terminal stroke, terminal error) complete and move on with
            # Enter; everything else moves on with Tab.
            kb.press("Enter" if i in (12, 15) else "Tab")
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
