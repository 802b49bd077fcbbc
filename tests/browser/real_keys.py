"""Keys sent to a page as a real keyboard sends them: the one way the browser tests type.

A capital or a shifted symbol ("I", "?", ">", "{") is a chord: the Shift keydown, the key
(its keydown carries ``shiftKey``), then the Shift keyup, each a keydown of its own that
the page sees. Successive keydowns (the Shift's included) are ``spacing_ms`` apart, a fixed
number or a (low, high) range drawn from a seeded generator, as a typist's rhythm varies.

    type_keys(page, "34I1100o", spacing_ms=(30, 50))   # digits, Shift+I, digits, o
    press_key(page, "?")                                # Shift down, "?", Shift up
    keys = RealKeyboard(page, spacing_ms=40); keys.type("t"); keys.press("Enter")

``tests/architecture/test_browser_keys_are_typed_as_a_keyboard_does.py`` fails if a browser test types
text any other way, or presses a capital or a shifted key without this module.
"""

from __future__ import annotations

import random
import time

# The keys a US keyboard types with Shift (the layout Playwright's keyboard uses).
SHIFTED_SYMBOLS = frozenset('~!@#$%^&*()_+{}|:"<>?')
DEFAULT_SPACING_MS: tuple[float, float] = (30.0, 50.0)


def needs_shift(key: str) -> bool:
    """Whether a one-character key is typed with Shift held (a capital or a shifted symbol)."""
    return len(key) == 1 and ("A" <= key <= "Z" or key in SHIFTED_SYMBOLS)


class RealKeyboard:
    """``page.keyboard`` with the Shift of a real keyboard and a typist's spacing."""

    def __init__(self, page, spacing_ms: float | tuple[float, float] = DEFAULT_SPACING_MS, seed: int = 0):
        self.page = page
        self.spacing_ms = spacing_ms
        self._random = random.Random(seed)
        self._last: float | None = None  # time.monotonic() of the last keydown

    def _gap(self) -> float:
        if isinstance(self.spacing_ms, tuple):
            low, high = self.spacing_ms
            return self._random.uniform(low, high) / 1000
        return self.spacing_ms / 1000

    def _pace(self) -> None:
        # The rhythm of the typist (not a wait on the page): each keydown a gap after the last.
        if self._last is not None:
            left = self._last + self._gap() - time.monotonic()
            if left > 0:
                time.sleep(left)
        self._last = time.monotonic()

    def press(self, key: str) -> None:
        """One key or chord ("Enter", "Control+z", "Shift+ArrowRight", "I", "?")."""
        if needs_shift(key):
            self._pace()
            self.page.keyboard.down("Shift")
            self._pace()
            self.page.keyboard.press(key)  # its keydown carries shiftKey, as the letter under a held Shift
            self.page.keyboard.up("Shift")
            return
        self._pace()
        self.page.keyboard.press(key)

    def dead_key(self) -> None:
        """A dead accent key (´ on a French or US-International layout) pressed alone: the
        browser sends keydown "Dead" (Playwright's keyboard has no such key; sent through CDP)."""
        self._pace()
        session = self.page.context.new_cdp_session(self.page)
        key = {"key": "Dead", "code": "Quote", "windowsVirtualKeyCode": 222}
        session.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **key})
        session.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})
        session.detach()

    def type(self, text: str) -> None:
        """Each character a key (capitals and shifted symbols with Shift)."""
        for char in text:
            if char == "\n":
                self.press("Enter")
            elif char.isascii():
                self.press(char)
            else:  # no key on the layout (an accent, a dash): typed as text, as an input method does
                self._pace()
                self.page.keyboard.insert_text(char)


def type_keys(page, text: str, spacing_ms: float | tuple[float, float] = DEFAULT_SPACING_MS) -> None:
    RealKeyboard(page, spacing_ms).type(text)


def press_key(page, key: str) -> None:
    RealKeyboard(page).press(key)
