"""Firefox ESR for the browser tests: a page object with the part of Playwright's ``Page``
the player tests use (``goto``, ``evaluate``, ``wait_for_function``, ``keyboard``), so one
test body runs in Chromium (Playwright) and in Firefox.

Firefox is Debian's ``/usr/bin/firefox-esr``, driven by npm ``puppeteer-core`` (pinned in
package.json) over WebDriver BiDi through ``firefox_bridge.mjs``: a Node process that
answers one JSON request a line. No geckodriver, no browser download.

    browser = FirefoxBrowser()              # starts Firefox (headless)
    page = browser.new_page()
    page.goto(url); page.evaluate("async (n) => n + 1", 1)
    browser.close()
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

FIREFOX = "/usr/bin/firefox-esr"
ROOT = Path(__file__).resolve().parents[2]
BRIDGE = Path(__file__).with_name("firefox_bridge.mjs")


def missing() -> str | None:
    """Why Firefox tests cannot run here (None: they can). Only an absent browser is a
    reason to skip; a missing driver is an error (``FirefoxBrowser`` says which)."""
    if not Path(FIREFOX).exists():
        return f"{FIREFOX} is not installed (apt-get install -y firefox-esr); Firefox browser tests cannot run here"
    return None


def _check_driver() -> None:
    if shutil.which("node") is None:
        raise BridgeError("node is not installed: the Firefox bridge runs on Node.js 20")
    if not (ROOT / "node_modules" / "puppeteer-core").is_dir():
        raise BridgeError("node_modules/puppeteer-core is missing: run bin/setup-js (npm ci)")


class BridgeError(RuntimeError):
    """An error Firefox (or the bridge) reported for one request."""


class FirefoxBrowser:
    def __init__(self, executable: str = FIREFOX, prefs: dict[str, Any] | None = None):
        _check_driver()
        self._process = subprocess.Popen(
            ["node", str(BRIDGE), executable, json.dumps(prefs or {})],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._next = 0
        self._lock = threading.Lock()
        self.version = self.call("version")

    def call(self, op: str, **fields: Any) -> Any:
        with self._lock:
            self._next += 1
            request = {"id": self._next, "op": op, **fields}
            assert self._process.stdin and self._process.stdout
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise BridgeError(f"the Firefox bridge exited (code {self._process.poll()}) during {op}")
        answer = json.loads(line)
        if answer.get("id") != request["id"]:
            raise BridgeError(f"the Firefox bridge answered request {answer.get('id')} for {request['id']}")
        if "error" in answer:
            raise BridgeError(f"{op}: {answer['error']}")
        return answer["value"]

    def new_page(self) -> FirefoxPage:
        return FirefoxPage(self, self.call("newPage"))

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin
            self._process.stdin.close()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)


class FirefoxKeyboard:
    """``page.keyboard`` as tests/browser/real_keys.py uses it."""

    def __init__(self, page: FirefoxPage):
        self.page = page

    def _key(self, action: str, key: str) -> None:
        self.page.browser.call("key", page=self.page.id, action=action, key=key)

    def press(self, key: str) -> None:
        *modifiers, last = key.split("+") if len(key) > 1 else [key]
        for modifier in modifiers:
            self._key("down", modifier)
        self._key("press", last)
        for modifier in reversed(modifiers):
            self._key("up", modifier)

    def down(self, key: str) -> None:
        self._key("down", key)

    def up(self, key: str) -> None:
        self._key("up", key)

    def insert_text(self, text: str) -> None:
        self._key("insertText", text)


class FirefoxPage:
    """The part of Playwright's sync ``Page`` the player tests use."""

    def __init__(self, browser: FirefoxBrowser, page_id: str):
        self.browser = browser
        self.id = page_id
        self.keyboard = FirefoxKeyboard(self)

    def add_cookies(self, cookies: list[dict]) -> None:
        self.browser.call("setCookie", page=self.id, cookies=cookies)

    def add_init_script(self, source: str) -> None:
        self.browser.call("addInitScript", page=self.id, source=source)

    def goto(self, url: str) -> None:
        self.browser.call("goto", page=self.id, url=url)

    @property
    def url(self) -> str:
        return self.browser.call("url", page=self.id)

    def evaluate(self, expression: str, arg: Any = None) -> Any:
        return self.browser.call("evaluate", page=self.id, expression=expression, arg=arg)

    def wait_for_function(self, expression: str, arg: Any = None, timeout: float = 30000) -> Any:
        return self.browser.call("waitForFunction", page=self.id, expression=expression, arg=arg, timeout=timeout)

    def uncaught(self) -> list[str]:
        """The messages of the page's uncaught errors and unhandled rejections so far."""
        return self.browser.call("uncaught", page=self.id)

    def close(self) -> None:
        self.browser.call("closePage", page=self.id)
