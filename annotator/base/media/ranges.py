"""Serve a file with HTTP Range support (RFC 9110 sections 13-14), for media elements.

Browsers cannot seek in a ``<video>`` unless the server answers ``Range`` requests with
``206 Partial Content``; Django's static serving and ``FileResponse`` ignore ``Range``.

Behaviour of :func:`ranged_file_response`:

- ``Accept-Ranges: bytes``, a strong ``ETag`` and ``Last-Modified`` on every answer;
- ``If-None-Match`` / ``If-Modified-Since`` matching the file: ``304 Not Modified``;
- one satisfiable range (``bytes=a-b``, ``bytes=a-``, ``bytes=-n``): ``206`` with
  ``Content-Range: bytes a-b/size``; an end past the file is clipped to the last byte;
- an **open-ended** range (``bytes=a-``, what a ``<video>`` asks for at every seek) is
  answered with at most ``FRAMELEDGER_MEDIA_RANGE_BYTES`` (8 MiB): ``206`` with
  ``Content-Range: bytes a-(a+N-1)/size``. RFC 9110 (14.2) lets a server send less than an
  open range asks for, and media players then ask for the next range when they need it;
  so no response promises gigabytes a seek will abandon a second later;
- a syntactically valid range set none of whose ranges is satisfiable (the first byte
  at or past the end, or a zero-length suffix): ``416`` with ``Content-Range: bytes */size``;
- a malformed ``Range`` header, a unit other than ``bytes``: ignored, ``200`` with the whole file
  (the RFC says to ignore what cannot be parsed);
- **several ranges** (``bytes=0-1,5-6``): ``200`` with the whole file. The RFC lets a server
  ignore ``Range``; browsers never ask media this way, and a multipart/byteranges body
  would only add code that nothing uses;
- ``If-Range`` with an ETag (strong comparison) or an HTTP date (exactly equal to
  ``Last-Modified``) that does not match: the range is ignored and the whole file is sent
  with ``200``, so a client never stitches pieces of two different files;
- ``HEAD`` gets the same headers and no body.

With ``FRAMELEDGER_MEDIA_ACCEL_PREFIX`` set (behind nginx), a file under ``MEDIA_ROOT`` is
not sent by Django at all: the answer is ``X-Accel-Redirect`` and nginx serves the bytes
and the ranges (:func:`accel_redirect_response`).

The body streams in chunks; under ASGI it is an async iterator (file reads happen in a
worker thread), so Django does not buffer the whole file in memory, and under the embedded
default's server (uvicorn, ``deploy.serve``) each chunk is read only after the previous one
left for the socket (``send`` waits while the socket's buffer is full): a response never
runs ahead of its client by more than one chunk and the socket's buffers.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import quote

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, StreamingHttpResponse
from django.utils.http import http_date, parse_http_date_safe

CHUNK_SIZE = 64 * 1024  # the unit a response is read and sent in (what a seek can waste on top of the socket)
DEFAULT_OPEN_RANGE_BYTES = 8 * 1024 * 1024
_RANGE_SPEC = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$")


class _Unsatisfiable(Exception):
    pass


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """The one byte range (first, last inclusive) a ``Range`` header asks for.

    Returns ``None`` when the header must be ignored (malformed, not bytes, several
    ranges) and raises ``_Unsatisfiable`` when it is valid but no range fits the file.
    """
    unit, sep, spec = header.partition("=")
    if not sep or unit.strip().lower() != "bytes":
        return None
    parts = spec.split(",")
    parsed = []
    for part in parts:
        match = _RANGE_SPEC.match(part)
        if not match or (not match.group(1) and not match.group(2)):
            return None
        first, last = match.groups()
        if first and last and int(last) < int(first):
            return None
        parsed.append((first, last))
    if len(parsed) != 1:
        return None
    first, last = parsed[0]
    if not first:  # suffix: the last N bytes
        length = int(last)
        if length == 0 or size == 0:
            raise _Unsatisfiable
        return max(0, size - length), size - 1
    start = int(first)
    if start >= size:
        raise _Unsatisfiable
    end = min(int(last), size - 1) if last else min(size - 1, start + open_range_bytes() - 1)
    return start, end


def open_range_bytes() -> int:
    """The most bytes an open-ended range (``bytes=a-``) is answered with."""
    from django.conf import settings

    return max(1, int(getattr(settings, "FRAMELEDGER_MEDIA_RANGE_BYTES", DEFAULT_OPEN_RANGE_BYTES)))


def file_etag(path: str | Path, stat: os.stat_result | None = None) -> str:
    """A strong validator from the file's identity, size and modification time."""
    stat = stat or os.stat(path)
    token = f"{os.fspath(path)}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"
    return '"' + hashlib.sha256(token.encode()).hexdigest()[:32] + '"'


def _etag_list(header: str) -> list[str]:
    return [tag.strip() for tag in header.split(",") if tag.strip()]


def _if_range_matches(value: str, etag: str, mtime: int) -> bool:
    value = value.strip()
    if value.startswith('"'):
        return value == etag  # strong comparison; weak tags never match
    if value.startswith("W/"):
        return False
    date = parse_http_date_safe(value)
    return date is not None and date == mtime


def _not_modified(request: HttpRequest, etag: str, mtime: int) -> bool:
    inm = request.headers.get("If-None-Match")
    if inm is not None:
        tags = _etag_list(inm)
        return "*" in tags or etag in tags or f"W/{etag}" in tags
    ims = request.headers.get("If-Modified-Since")
    if ims is not None:
        date = parse_http_date_safe(ims)
        return date is not None and mtime <= date
    return False


def _iter_file(path: str, start: int, length: int) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        fh.seek(start)
        remaining = length
        while remaining > 0:
            chunk = fh.read(min(CHUNK_SIZE, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk


async def _aiter_file(path: str, start: int, length: int) -> AsyncIterator[bytes]:
    fh = await asyncio.to_thread(open, path, "rb")
    try:
        await asyncio.to_thread(fh.seek, start)
        remaining = length
        while remaining > 0:
            chunk = await asyncio.to_thread(fh.read, min(CHUNK_SIZE, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk
    finally:
        await asyncio.to_thread(fh.close)


def _is_asgi(request: HttpRequest) -> bool:
    from django.core.handlers.asgi import ASGIRequest

    return isinstance(request, ASGIRequest)


def accel_path(path: str) -> str | None:
    """The internal nginx URI of ``path`` when ``FRAMELEDGER_MEDIA_ACCEL_PREFIX`` is set and
    the file lies under ``MEDIA_ROOT``; None otherwise (Django sends the bytes itself)."""
    from django.conf import settings

    prefix = settings.FRAMELEDGER_MEDIA_ACCEL_PREFIX
    if not prefix:
        return None
    root = os.path.realpath(settings.MEDIA_ROOT)
    real = os.path.realpath(path)
    if not real.startswith(root + os.sep):
        return None
    relative = os.path.relpath(real, root).replace(os.sep, "/")
    return prefix.rstrip("/") + "/" + quote(relative)


def accel_redirect_response(path: str, content_type: str, cache_control: str) -> HttpResponse | None:
    """Behind nginx (docs/deploy.md): an empty answer whose ``X-Accel-Redirect`` names the
    file; nginx then sends it, answering Range, If-Range and conditional requests itself.
    The access check has already run in the view."""
    uri = accel_path(path)
    if uri is None:
        return None
    response = HttpResponse(content_type=content_type)
    response["X-Accel-Redirect"] = uri
    response["Cache-Control"] = cache_control
    return response


def ranged_file_response(
    request: HttpRequest,
    path: str | Path,
    content_type: str,
    *,
    etag: str | None = None,
    cache_control: str = "private, max-age=3600",
) -> HttpResponse:
    """Answer ``request`` (GET or HEAD) with ``path``, honouring Range and If-Range."""
    path = os.fspath(path)
    accel = accel_redirect_response(path, content_type, cache_control)
    if accel is not None:
        return accel
    stat = os.stat(path)
    size, mtime = stat.st_size, int(stat.st_mtime)
    etag = etag or file_etag(path, stat)
    common = {
        "Accept-Ranges": "bytes",
        "ETag": etag,
        "Last-Modified": http_date(mtime),
        "Cache-Control": cache_control,
    }

    if _not_modified(request, etag, mtime):
        response = HttpResponseNotModified()
        for key, value in common.items():
            response[key] = value
        return response

    byte_range = None
    range_header = request.headers.get("Range")
    if_range = request.headers.get("If-Range")
    if range_header and (if_range is None or _if_range_matches(if_range, etag, mtime)):
        try:
            byte_range = parse_range(range_header, size)
        except _Unsatisfiable:
            response = HttpResponse(status=416, content_type="text/plain")
            response["Content-Range"] = f"bytes */{size}"
            for key, value in common.items():
                response[key] = value
            return response

    start, end = byte_range if byte_range else (0, size - 1)
    length = max(0, end - start + 1)
    if request.method == "HEAD":
        response = HttpResponse(status=206 if byte_range else 200, content_type=content_type)
    else:
        body = _aiter_file(path, start, length) if _is_asgi(request) else _iter_file(path, start, length)
        response = StreamingHttpResponse(body, status=206 if byte_range else 200, content_type=content_type)
    response["Content-Length"] = str(length)
    if byte_range:
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    for key, value in common.items():
        response[key] = value
    return response
