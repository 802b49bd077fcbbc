"""Real Chromium (Debian's /usr/bin/chromium, headless) driven by Playwright against
pytest-django's live server (threaded WSGI; Range support comes from our media view), or,
in a module that sets ``SERVER = "uvicorn"``, against the embedded default's server
(``deploy.serve``: uvicorn, ASGI, as ``bin/run-demo`` runs it) in a child process on the
test database. That child is started when the test opens its first page, so the fixtures
and settings of the test (eager Celery, its MEDIA_ROOT) are those it inherits.

The browser is started once per module. Playwright's sync API keeps an asyncio loop
in this thread, which makes Django refuse ORM calls from it; the tests here create
their rows in that same thread, so ``DJANGO_ALLOW_ASYNC_UNSAFE`` is set while a
browser module runs (the live server's own threads are unaffected).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

# Barcode sources and real ingest, shared with the media suite.
from tests.media.conftest import eager_celery, ingest, media_packet, synthetic_source  # noqa: F401

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]

# Reads the mean luma of each barcode cell of the frame the <video> shows now.
READ_CELLS_JS = """
window.__flReadCells = (boxes) => {
  const video = document.querySelector("video.fl-video");
  const canvas = document.createElement("canvas");
  canvas.width = video.videoWidth;
  canvas.height = video.videoHeight;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.drawImage(video, 0, 0);
  const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  return boxes.map(([x, y, w, h]) => {
    let sum = 0;
    for (let yy = y; yy < y + h; yy++) {
      for (let xx = x; xx < x + w; xx++) {
        const i = (yy * canvas.width + xx) * 4;
        sum += 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
      }
    }
    return sum / (w * h);
  });
};
"""


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium); browser tests cannot run here")
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="module")
def firefox():
    """Debian's Firefox ESR over WebDriver BiDi (tests/browser/firefox.py), once per module."""
    from tests.browser.firefox import FirefoxBrowser, missing

    reason = missing()
    if reason:
        pytest.skip(reason)
    browser = FirefoxBrowser()
    yield browser
    browser.close()


@pytest.fixture
def migration_rows(transactional_db):
    """Re-create the rows the data migration made (builtin task kinds, maintainers group).

    Transactional tests flush every table afterwards. ``serialized_rollback`` would
    restore them, but it does not work here: Django keeps connections per context,
    Playwright's sync API runs the test in another greenlet context, and the connection
    the test sees is not the one that holds the serialized copy.
    """
    from django.apps import apps

    migration = importlib.import_module("annotator.migrations.0002_builtin_task_kinds")
    migration.create_builtin_kinds(apps, None)


class _LazyServer:
    """The base URL of the test's server: pytest-django's live server, or a uvicorn child
    process started on first use (``SERVER = "uvicorn"`` in the module)."""

    def __init__(self, request, blocker):
        self.request = request
        self.blocker = blocker
        self.process = None
        self._url = None

    @property
    def url(self) -> str:
        if self._url is None:
            if getattr(self.request.module, "SERVER", "wsgi") == "uvicorn":
                self._url = self._start_uvicorn()
            else:
                self._url = self.request.getfixturevalue("live_server").url
        return self._url

    def _start_uvicorn(self) -> str:
        from functools import partial

        from channels.testing.live import make_application
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        from tests.http.live_server import UvicornProcess

        blocker = self.blocker

        def setup():  # in the forked server process
            # The settings already name the test database (pytest-django switched them before the fork).
            blocker.unblock()

        self.process = UvicornProcess(
            "localhost", partial(make_application, static_wrapper=ASGIStaticFilesHandler), setup=setup
        )
        from django.db import connections

        connections.close_all()  # a forked child must not share the parent's database socket
        self.process.start()
        if not self.process.ready.wait(timeout=30):
            self.process.terminate()
            pytest.fail("the server did not start")
        return f"http://localhost:{self.process.port.value}"

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.join(10)


@pytest.fixture
def browser_server(request, migration_rows, django_db_blocker):
    server = _LazyServer(request, django_db_blocker)
    yield server
    server.stop()


@pytest.fixture
def page_as(chromium, browser_server, migration_rows):
    """(user, path) -> a Playwright page signed in as ``user`` and opened at ``path``.

    Create the rows a page needs inside the test (after this fixture), since the
    transactional flush of the previous test removed the builtin task kinds until
    ``migration_rows`` put them back.
    """
    contexts = []
    refused: list[str] = []  # what the Content-Security-Policy blocked on these pages

    def open_page(user, path: str):
        client = Client()
        client.force_login(user)
        context = chromium.new_context()
        contexts.append(context)
        context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": browser_server.url,
                }
            ]
        )
        page = context.new_page()
        page.on(
            "console",
            lambda m: refused.append(m.text) if m.type == "error" and "Content Security Policy" in m.text else None,
        )
        page.add_init_script(READ_CELLS_JS)
        page.goto(browser_server.url + path)
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not refused, f"the Content-Security-Policy refused something on these pages: {refused}"


@pytest.fixture(params=["chromium", "firefox"])
def browser_name(request) -> str:
    """Each supported browser in turn (a test taking it runs once in each)."""
    return request.param


@pytest.fixture
def page_in(request, browser_name, browser_server, migration_rows):
    """(user, path) -> a page of ``browser_name`` signed in as ``user`` and opened at
    ``path``: Playwright's Chromium page (``page_as``) or a Firefox page with the same
    ``goto``/``evaluate``/``wait_for_function``/``keyboard`` (tests/browser/firefox.py)."""
    if browser_name == "chromium":
        yield request.getfixturevalue("page_as")
        return
    firefox = request.getfixturevalue("firefox")
    pages = []

    def open_page(user, path: str):
        client = Client()
        client.force_login(user)
        page = firefox.new_page()
        pages.append(page)
        page.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": browser_server.url,
                }
            ]
        )
        page.add_init_script(READ_CELLS_JS)
        page.goto(browser_server.url + path)
        return page

    yield open_page
    for page in pages:
        page.close()
