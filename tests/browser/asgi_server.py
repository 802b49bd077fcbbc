"""A real ASGI server for browser tests: the embedded default's server (uvicorn, as
``bin/run-demo`` runs it) in a child process on the test database.

pytest-django's live server speaks WSGI only, so websockets (presence, live
adjudication, the job relay) need this. It is what Channels' ChannelsLiveServerTestCase
does, as pytest fixtures. Import the fixtures into a test module:
``from tests.browser.asgi_server import asgi_server, open_as``.
"""

from __future__ import annotations

from functools import partial

import pytest
from channels.testing.live import make_application
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from django.test import Client

from tests.browser.ledger_pages import wait_ready
from tests.http.live_server import UvicornProcess


@pytest.fixture
def asgi_server(django_db_setup, django_db_blocker, settings):
    """One server per test: the child process takes the settings of the moment it is
    forked (each test has its own MEDIA_ROOT, see tests/conftest.py)."""

    def setup():  # in the forked server process
        # The settings already name the test database (pytest-django switched them before the fork).
        django_db_blocker.unblock()  # the server, unlike test code, always reaches the database

    process = UvicornProcess("localhost", partial(make_application, static_wrapper=ASGIStaticFilesHandler), setup=setup)
    connections.close_all()  # a forked child must not share the parent's database socket
    process.start()
    if not process.ready.wait(timeout=30):
        process.terminate()
        pytest.fail("the server did not start")
    yield f"http://localhost:{process.port.value}"
    process.terminate()
    process.join(10)


@pytest.fixture
def open_as(chromium, asgi_server):
    contexts = []

    def open_page(user, path: str, *, context=None, before=None, ready=True):
        """A page signed in as ``user`` (a new context, or a new tab of ``context``);
        ``before(page)`` runs before the first request (to attach listeners)."""
        if context is None:
            client = Client()
            client.force_login(user)
            context = chromium.new_context()
            contexts.append(context)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": asgi_server}])
        page = context.new_page()
        frames = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
        page.ws_frames = frames
        if before is not None:
            before(page)
        page.goto(asgi_server + path)
        if ready:
            wait_ready(page)
        return page

    yield open_page
    for context in contexts:
        context.close()
