"""Media endpoints: the proxy (by byte range), the frame table, exact frames, thumbnails.

Two families with the same files behind them:

- ``/media/packets/<packet_id>/...`` for anyone on the packet (``access_packet``);
- ``/media/videos/<video_id>/...`` for maintainers (``access_video``).

Whoever may not see the packet or video, signed in or not, gets the same 404 a
missing one gets. A video that is not ready yet has no media: 404 as well.

Renditions (docs/media.md §4): a video ready for annotation has a ``remux`` (browser-playable
sources, made first) and/or a ``proxy`` (the seek-friendly encode, possibly still being
made), and a ``full`` rendition (the proxy recipe at the source's own height) once someone
asked for it. Each is served at its own versioned URL (``…/remux/<version>.mp4``, version = the
start of its SHA-256), which only ever answers that file's bytes, so a file a player is
playing is never replaced under it. ``renditions.json`` says which exist now. The frame
table, exact frames and thumbnails are of the best rendition (the proxy once it exists);
every rendition has the same frame timing.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from functools import lru_cache, wraps

from django.http import Http404, HttpResponse, HttpResponseNotModified, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from annotator.base.compression import accepts_gzip
from annotator.base.media.errors import FrameMismatch, FrameOutOfRange
from annotator.base.media.frames import IMAGE_FORMATS, frame_image
from annotator.base.media.ranges import ranged_file_response
from annotator.models import Video
from annotator.reads import access
from annotator.reads.media import RENDITIONS, best_rendition, frame_table_of, rendition_version, renditions_of
from annotator.reads.sealed_media import verified_media

FRAME_CACHE_CONTROL = "private, max-age=86400"


def _packet_video(request, packet_id: int) -> Video:
    try:
        return access.access_packet(request.user, packet_id).packet.video
    except access.NotFound:
        raise Http404("Not found") from None


def _maintainer_video(request, video_id: int) -> Video:
    try:
        return access.access_video(request.user, video_id)
    except access.NotFound:
        raise Http404("Not found") from None


RESOLVERS = {"packet": _packet_video, "video": _maintainer_video}


def media_view(func):
    """Resolve ``owner`` ("packet"/"video") + ``object_id`` to a ready Video, with access."""

    @require_safe
    @wraps(func)
    def view(request, owner: str, object_id: int, **kwargs):
        video = RESOLVERS[owner](request, object_id)
        if video.status != Video.Status.READY or not (video.proxy or video.remux):
            raise Http404("Not found")
        verified_media(video)  # the renditions' hashes and the frame table as ingest recorded them
        return func(request, video, owner=owner, object_id=object_id, **kwargs)

    return view


@media_view
def proxy(request, video: Video, **_):
    """The proxy at its unversioned URL (404 until the proxy exists)."""
    if not video.proxy:
        raise Http404("Not found")
    etag = f'"{video.proxy_sha256}"' if video.proxy_sha256 else None
    return ranged_file_response(request, video.proxy.path, "video/mp4", etag=etag)


@media_view
def rendition(request, video: Video, kind: str, version: str, **_):
    """Rendition ``kind`` at its versioned URL: only ever this version's bytes."""
    if kind not in RENDITIONS or rendition_version(video, kind) != version:
        raise Http404("Not found")
    sha = getattr(video, f"{kind}_sha256")
    return ranged_file_response(
        request,
        getattr(video, kind).path,
        "video/mp4",
        etag=f'"{sha}"' if sha else None,
        cache_control="private, max-age=31536000, immutable",
    )


@media_view
def renditions(request, video: Video, owner: str, object_id: int, **_):
    """Which renditions exist now, at their versioned URLs (the player polls this)."""
    response = JsonResponse(renditions_of(video, owner, object_id))
    response["Cache-Control"] = "private, no-store"
    return response


@lru_cache(maxsize=16)
def _table_bytes(path: str, mtime_ns: int) -> tuple[bytes, bytes, str]:
    """The frame table file as stored, gzipped once, and a tag naming its content."""
    with open(path, "rb") as fh:
        raw = fh.read()
    return raw, gzip.compress(raw, compresslevel=6, mtime=0), hashlib.sha256(raw).hexdigest()[:32]


@media_view
def frames_json(request, video: Video, **_):
    """The proxy's frame table (version 2, compact; see FrameTable.to_json), gzipped when
    the client accepts it. Revalidated by ETag (one per representation)."""
    path = video.frame_table.path
    raw, packed, tag = _table_bytes(path, os.stat(path).st_mtime_ns)
    use_gzip = accepts_gzip(request)
    etag = f'"{tag}-gz"' if use_gzip else f'"{tag}"'
    if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(packed if use_gzip else raw, content_type="application/json")
        if use_gzip:
            response["Content-Encoding"] = "gzip"
    response["ETag"] = etag
    response["Vary"] = "Accept-Encoding"
    response["Cache-Control"] = "private, no-cache"
    return response


@media_view
def frame(request, video: Video, n: int, fmt: str = "png", **_):
    """Frame ``n`` of the proxy, decoded exactly, as PNG (lossless) or JPEG."""
    path, sha = best_rendition(video)
    etag = f'"{sha}-{n}-{fmt}"'
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponseNotModified()
        response["ETag"] = etag
        return response
    table = frame_table_of(video)
    try:
        data = frame_image(path, table, n, fmt)
    except FrameOutOfRange:
        raise Http404("No such frame") from None
    except FrameMismatch as exc:
        return HttpResponse(f"frame {n} cannot be decoded exactly: {exc}", status=500, content_type="text/plain")
    response = HttpResponse(data, content_type=IMAGE_FORMATS[fmt][1])
    response["ETag"] = etag
    response["Cache-Control"] = FRAME_CACHE_CONTROL
    response["X-Frame-Index"] = str(n)
    response["X-Frame-Pts"] = repr(table.seconds(n))
    return response


@media_view
def thumbnails(request, video: Video, **_):
    if not video.thumbnails:
        raise Http404("Not found")
    return ranged_file_response(request, video.thumbnails.path, "image/jpeg")


@media_view
def thumbnails_meta(request, video: Video, owner: str, object_id: int, **_):
    if not video.thumbnails:
        raise Http404("Not found")
    meta = dict(video.thumbnail_meta)
    meta["sprite"] = reverse(f"media-{owner}-thumbs", kwargs={"object_id": object_id})
    response = JsonResponse(meta)
    response["Cache-Control"] = "private, max-age=3600"
    return response
