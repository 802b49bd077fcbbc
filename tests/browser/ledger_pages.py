"""Helpers for driving the workspace and adjudication pages from Playwright.

Everything an annotator does here goes through the keyboard (``page.keyboard``); the
helpers only *wait* on page state (``wait_for_function``), they never call page code
to make a change.
"""

from __future__ import annotations

from pathlib import Path

from tests.browser.real_keys import type_keys

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def wait_ready(page, timeout: float = 30000) -> None:
    page.wait_for_function(
        "() => window.frameledger && (window.frameledger.ready || window.frameledger.loadError)", timeout=timeout
    )
    error = page.evaluate("window.frameledger.loadError || null")
    assert error is None, f"page failed to load: {error}"


# The focus is back on the page, where its keys are shortcuts: on the player (drawn with a
# focus ring), or on the workspace itself where no player is shown.
AT_HOME = "() => document.activeElement.matches('#player .fl-player, #workspace')"


def wait_frame(page, frame: int) -> None:
    page.wait_for_function(
        "(n) => window.frameledger.player.currentFrame === n && !window.frameledger.player.seeking", arg=frame
    )


def go_to_frame(page, frame: int) -> None:
    """Home, then Shift+Right (10 frames) and Right (1 frame) presses."""
    page.keyboard.press("Home")
    wait_frame(page, 0)
    for _ in range(frame // 10):
        page.keyboard.press("Shift+ArrowRight")
    for _ in range(frame % 10):
        page.keyboard.press("ArrowRight")
    wait_frame(page, frame)


def wait_painted(page, frames: int = 2) -> None:
    """Until the page has painted ``frames`` more frames: what the keys typed before did, in
    their handlers or on the next animation frame, is then on the screen. The wait for a
    key that must change nothing (a wait on the page's rendering, never on the clock)."""
    page.evaluate(
        "(n) => new Promise((done) => { const step = (k) => (k ? requestAnimationFrame(() => step(k - 1)) : done());"
        " step(n); })",
        frames,
    )


def wait_saved(page, timeout: float = 15000) -> None:
    page.wait_for_function(
        "() => document.querySelector('#save-status').dataset.status === 'saved'"
        " && window.frameledger.store.getState().pending.length === 0",
        timeout=timeout,
    )


# What the workspace shows, for a failed wait's message: the save status, the events and
# the pending operations, the notice, the draft and the focused element.
PAGE_STATE_JS = """() => {
    const form = document.querySelector('#event-form');
    const state = window.frameledger && window.frameledger.store ? window.frameledger.store.getState() : null;
    return {
        status: document.querySelector('#save-status')?.dataset.status,
        rows: document.querySelectorAll('#ledger-table tbody tr').length,
        pending: state ? state.pending.length : null,
        notice: document.querySelector('#notice')?.textContent,
        draft: form ? Object.fromEntries([...form.querySelectorAll('[name]')].map((e) => [e.name, e.value])) : null,
        focus: ((a) => a && (a.id || a.name || a.tagName))(document.activeElement),
    };
}"""


def wait_status(page, status: str, timeout: float = 30000) -> None:
    """The save status reads ``status``; on a time-out the failure says what the page showed."""
    try:
        page.wait_for_function(
            "(s) => document.querySelector('#save-status').dataset.status === s", arg=status, timeout=timeout
        )
    except Exception as error:  # playwright's TimeoutError: say what was on screen instead
        raise AssertionError(f"save status never read {status!r}: {page.evaluate(PAGE_STATE_JS)}") from error


def add_action_by_keyboard(page, start: int, end: int, verb: str, nouns: list[str]) -> None:
    """Create one action-ledger event with keys only: seek, i, seek, o (the focus moves to
    the verb), the verb, Enter, the nouns separated by "," and Enter (adds the last, saves)."""
    page.locator("#workspace").focus()
    go_to_frame(page, start)
    page.keyboard.press("i")
    go_to_frame(page, end)
    page.keyboard.press("o")
    page.wait_for_function(
        "([s, e]) => document.querySelector('#ev-start_frame').value === String(s)"
        " && document.querySelector('#ev-end_frame').value === String(e)",
        arg=[start, end],
    )
    page.wait_for_function("() => document.activeElement.id === 'ev-verb'")  # o moved the focus there
    type_keys(page, verb)
    page.keyboard.press("Enter")  # takes the verb, on to the noun type-ahead
    type_keys(page, ",".join(nouns))  # "," adds a chip and stays for the next noun
    page.keyboard.press("Enter")  # adds the last noun and the event


def ledger_rows(page) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#ledger-table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    page.screenshot(path=str(path), full_page=full_page)
    return path
