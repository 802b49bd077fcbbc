"""One access-log line per HTTP request, with the body bytes actually sent.

``AccessLogMiddleware`` (the outermost layer of ``deploy.asgi``) logs to the
``frameledger.access`` logger, after the response ends or the client goes away::

    127.0.0.1 "GET /media/packets/1/proxy/1a2b.mp4" 206 sent=8388608 of=8388608 range="bytes=0-" 812.4ms

``sent`` counts the body bytes the server handed to the socket. Under uvicorn a ``send``
waits while the socket's buffer is full, and the count stops at the client's disconnect,
so ``sent`` is what left the server (give or take the kernel's socket buffer), not what a
response promised: a client that reads 1 MB of a media response and stops is logged with
about 1 MB. ``of`` is the ``Content-Length`` the response declared (``-`` when none).
``aborted`` marks a response the client left before its end. It is on where
``FRAMELEDGER_ACCESS_LOG=1`` (``deploy.serve`` sets it: the embedded default has no other
access log); behind nginx (``bin/run-stack``) nginx writes the access log and media bytes
never pass through Django (X-Accel), so the stack's workers leave it off.
"""

from __future__ import annotations

import logging
import os
import time

logger = logging.getLogger("frameledger.access")


def _header(headers, name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class AccessLogMiddleware:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or os.environ.get("FRAMELEDGER_ACCESS_LOG") != "1":
            return await self.app(scope, receive, send)
        started = time.monotonic()
        state = {"status": None, "length": None, "sent": 0, "gone": False, "done": False}

        async def watched_receive():
            message = await receive()
            if message["type"] == "http.disconnect":
                state["gone"] = True
            return message

        async def counted_send(message):
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                state["length"] = _header(message.get("headers", []), b"content-length")
            await send(message)
            if message["type"] == "http.response.body" and not state["gone"]:
                state["sent"] += len(message.get("body", b""))
                state["done"] = state["done"] or not message.get("more_body", False)

        try:
            await self.app(scope, watched_receive, counted_send)
        finally:
            self.log(scope, state, started)

    @staticmethod
    def log(scope, state, started) -> None:
        client = scope.get("client") or ("-", 0)
        target = scope.get("path", "")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        parts = [
            f'{client[0]} "{scope.get("method", "-")} {target}" {state["status"] or "-"}',
            f"sent={state['sent']} of={state['length'] or '-'}",
        ]
        byte_range = _header(scope.get("headers", []), b"range")
        if byte_range:
            parts.append(f'range="{byte_range}"')
        if not state["done"]:
            parts.append("aborted")
        parts.append(f"{(time.monotonic() - started) * 1000:.1f}ms")
        logger.info(" ".join(parts))
