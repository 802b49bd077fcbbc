"""Daphne with request body limits checked as soon as the request head arrives.

Twisted, under Daphne, reads a whole request body (to a temporary file) before Daphne
calls the application, and Daphne then queues all of it in memory as ``http.request``
messages: a 600 MB POST to ``/login/`` costs 600 MB of server memory before any
middleware sees it. So the rule of ``deploy.body_limits.limit_for`` is applied here too,
by the Twisted request object:

- a ``Content-Length`` over the path's limit is answered ``413`` (the JSON error body)
  from the head alone; an ``Expect: 100-continue`` client is never told to send;
- a chunked body is counted as it arrives and answered ``413`` once it passes the limit;
- after a refusal, the rest of the body is read and dropped (never kept) for at most
  ``LINGER_SECONDS``, so that the client reads the 413 instead of a connection reset.

Use it as Daphne's command line: ``python -m deploy.serve -b 127.0.0.1 -p 8000
deploy.asgi:application`` (``bin/run-demo`` does). It runs Django's system checks first
and does not start on an error (a weak ``DJANGO_SECRET_KEY``, ``annotator.E020``).
"""

from __future__ import annotations

import logging
import os

from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server
from twisted.internet import reactor

from deploy.body_limits import TOO_LARGE, error_body, limit_for, too_large_message

logger = logging.getLogger(__name__)
LINGER_SECONDS = 10.0


def response_413(limit: int) -> bytes:
    body = error_body("too_large", too_large_message(limit))
    head = (
        f"HTTP/1.1 {TOO_LARGE} Content Too Large\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def request_path(channel) -> str:
    """The path of the request whose head has just been read (Twisted keeps the raw
    request target on the channel until the body is complete)."""
    target = getattr(channel, "_path", None)
    if not isinstance(target, bytes):
        return ""
    return target.split(b"?", 1)[0].decode("latin-1")


class LimitedWebRequest(WebRequest):
    body_limit: int | None = None
    body_seen = 0
    body_refused = False

    def gotLength(self, length):
        path = request_path(self.channel)
        self.body_limit = limit_for(path) if path else None
        if path == "":
            logger.warning("body limit: request path unknown; the ASGI middleware still applies")
        if self.body_limit is not None and length is not None and length > self.body_limit:
            self.refuse_body()
            return
        super().gotLength(length)

    def handleContentChunk(self, data):
        if self.body_refused:
            return  # read and dropped
        self.body_seen += len(data)
        if self.body_limit is not None and self.body_seen > self.body_limit:
            self.refuse_body()
            return
        super().handleContentChunk(data)

    def requestReceived(self, command, path, version):
        if self.body_refused:
            return
        super().requestReceived(command, path, version)

    def refuse_body(self):
        self.body_refused = True
        self.requestHeaders.removeHeader(b"Expect")  # no "100 Continue" after the refusal
        content = getattr(self, "content", None)
        if content is not None:
            content.close()
        transport = self.channel.transport
        transport.write(response_413(self.body_limit))
        try:
            transport.loseWriteConnection()
        except (AttributeError, NotImplementedError):
            transport.loseConnection()
            return
        self.linger = reactor.callLater(LINGER_SECONDS, transport.abortConnection)

    def connectionLost(self, reason):
        linger = getattr(self, "linger", None)
        if linger is not None and linger.active():
            linger.cancel()
        super().connectionLost(reason)


class LimitedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr):
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = LimitedWebRequest
        return protocol


class LimitedServer(Server):
    """Daphne's server with ``LimitedHTTPFactory``: ``Server.run`` builds its HTTP factory
    and listens with it in one method, so the assignment is where it can be swapped."""

    @property
    def http_factory(self):
        return self._limited_http_factory

    @http_factory.setter
    def http_factory(self, factory):
        self._limited_http_factory = LimitedHTTPFactory(self)


class LimitedCommandLineInterface(CommandLineInterface):
    server_class = LimitedServer


def main(argv=None):
    """Run the system checks (an error, such as a weak secret key, stops the start), then Daphne."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("check", fail_level="ERROR")
    LimitedCommandLineInterface().run(argv)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
