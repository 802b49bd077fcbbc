"""Request body limits, applied before authentication and before the body is kept.

Every path gets ``FRAMELEDGER_MAX_BODY_BYTES`` (small); only the upload routes listed in
``FRAMELEDGER_UPLOAD_PATHS`` (``(regex, bytes)`` pairs matched against the path) get more.
A body over its limit is answered ``413`` with the JSON error body, whoever sends it. An
upload body the disks have no room for (its declared length against the free space of the
spool and media folders, less ``FRAMELEDGER_DISK_RESERVE_BYTES``) is answered ``507`` by
``DiskSpaceMiddleware`` before a byte of it is read (inside the upload identity check).

Two layers use the same rule (``limit_for``):

- ``BodyLimitMiddleware`` wraps the ASGI application (``deploy/asgi.py``): it refuses by
  ``Content-Length`` without reading a byte, and counts the bytes of a streamed
  (chunked) body as the server hands them over, stopping at the limit. This is all any
  ASGI server that streams request bodies needs.
- Daphne (Twisted) receives the whole body before it calls the application, then queues
  it in memory; so ``deploy.serve`` (how ``bin/run-demo`` starts Daphne) checks the same
  rule as soon as the request head has arrived. See that module.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from annotator.base.disk import OutOfSpace, free_bytes, reserve_bytes, space_message

TOO_LARGE = 413


class BodyTooLarge(Exception):
    """The streamed body passed its limit (raised inside ``receive``)."""


@lru_cache(maxsize=8)
def _compiled(rules: tuple[tuple[str, int], ...]) -> tuple[tuple[re.Pattern, int], ...]:
    return tuple((re.compile(pattern), int(limit)) for pattern, limit in rules)


def limit_for(path: str) -> int:
    """The largest request body accepted on ``path`` (the path only, no query string)."""
    rules = tuple(tuple(rule) for rule in settings.FRAMELEDGER_UPLOAD_PATHS)
    for pattern, limit in _compiled(rules):
        if pattern.match(path):
            return limit
    return settings.FRAMELEDGER_MAX_BODY_BYTES


def error_body(code: str, message: str) -> bytes:
    """The API's JSON error body (``annotator.entry.api.errors``), built without Django."""
    return json.dumps({"error": {"code": code, "message": message}}).encode()


def too_large_message(limit: int) -> str:
    return f"the request body is larger than the {limit} bytes this path accepts"


def declared_length(headers) -> tuple[int | None, bool]:
    """``(Content-Length, valid)`` from ASGI headers; ``(None, True)`` when absent."""
    values = [value for name, value in headers if name.lower() == b"content-length"]
    if not values:
        return None, True
    if len(set(values)) != 1 or not values[0].strip().isdigit():
        return None, False
    return int(values[0]), True


# After a refusal, how much of the unread body is read and dropped, and for how long, before
# the connection closes (see ``drain``).
DRAIN_BYTES = 64 * 1024**2
DRAIN_SECONDS = 10.0


async def drain(receive, *, limit: int = DRAIN_BYTES, seconds: float = DRAIN_SECONDS) -> None:
    """Read and drop what is left of the request body, up to ``limit`` bytes or
    ``seconds``. A server that closes a connection with unread bytes in its receive buffer
    makes the kernel reset it, and a peer still sending (nginx streams upload bodies
    unbuffered) can lose the answer sent just before: nginx then reports the web process
    as unavailable (503, "retry") instead of the refusal. Reading on lets the answer
    through; the bytes go nowhere, in pieces of whatever size the server hands over."""

    async def read_on():
        seen = 0
        while seen <= limit:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                return
            seen += len(message.get("body", b""))

    try:
        await asyncio.wait_for(read_on(), seconds)
    except (TimeoutError, BodyTooLarge):
        return


async def send_error(send, receive, status: int, code: str, message: str) -> None:
    """The API's JSON error, with ``Connection: close``; then what is left of the body is
    drained (``drain``) so that the answer reaches the client."""
    body = error_body(code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    # The whole answer is on the wire (its Content-Length says so) before the drain; the
    # response completes after it, since a server stops handing over the body once it has.
    await send({"type": "http.response.body", "body": body, "more_body": True})
    await drain(receive)
    await send({"type": "http.response.body", "body": b""})


def _multipart(headers) -> bool:
    return any(name.lower() == b"content-type" and b"multipart/" in value.lower() for name, value in headers)


def _device(folder: str | Path) -> int:
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    return os.stat(path).st_dev


def space_refusal(length: int, multipart: bool) -> str | None:
    """Why an upload body of ``length`` bytes cannot be taken, or None. Django spools the
    body to ``FILE_UPLOAD_TEMP_DIR`` (a multipart body once more as the parsed file), then
    the view writes it under ``MEDIA_ROOT`` (a rename when both are one file system)."""
    spool = settings.FILE_UPLOAD_TEMP_DIR or tempfile.gettempdir()
    media = settings.MEDIA_ROOT
    same = _device(spool) == _device(media)
    spooled = 2 * length if multipart else length
    needs = [(spool, spooled + (0 if multipart or not same else length))]
    if not same:
        needs.append((media, length))
    for folder, needed in needs:
        free = free_bytes(folder) - reserve_bytes()
        if free < needed:
            return space_message(folder, free, needed)
    return None


class DiskSpaceMiddleware:
    """ASGI middleware: 507 for an upload whose declared length the disks cannot take
    (``space_refusal``), before its body is read. It sits inside ``UploadAuthMiddleware``:
    only a signed-in client learns what is free where."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and limit_for(scope["path"]) > settings.FRAMELEDGER_MAX_BODY_BYTES:
            length, valid = declared_length(scope.get("headers", []))
            refusal = space_refusal(length, _multipart(scope.get("headers", []))) if valid and length else None
            if refusal is not None:
                return await send_error(send, receive, OutOfSpace.status, OutOfSpace.code, refusal)
        return await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """ASGI middleware: 413 for a body over the path's limit, 400 for a bad Content-Length."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = limit_for(scope["path"])
        length, valid = declared_length(scope.get("headers", []))
        if not valid:
            return await send_error(send, receive, 400, "invalid", "the Content-Length header is not a single number")
        if length is not None and length > limit:
            return await send_error(send, receive, TOO_LARGE, "too_large", too_large_message(limit))
        seen = 0
        started = False

        async def counted_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        async def watched_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except BodyTooLarge:
            if started:  # the application answered before reading it all; nothing to add
                return
            await send_error(send, receive, TOO_LARGE, "too_large", too_large_message(limit))
