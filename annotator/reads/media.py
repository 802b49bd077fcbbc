"""What a video's media are, read from its row: the frame table of its best rendition,
the renditions that exist now and their versioned URLs (``annotator.entry.media_views``
serves the bytes)."""

from __future__ import annotations

import os
from functools import lru_cache

from django.urls import reverse

from annotator.base.media.frametable import FrameTable
from annotator.models import Video


@lru_cache(maxsize=16)
def _load_table(path: str, mtime_ns: int) -> FrameTable:
    return FrameTable.load(path)


def frame_table_of(video: Video) -> FrameTable:
    path = video.frame_table.path
    return _load_table(path, os.stat(path).st_mtime_ns)


RENDITIONS = ("remux", "proxy", "full")
VERSION_LENGTH = 16


def best_rendition(video: Video) -> tuple[str, str]:
    """(path, sha256) of the file the frame table's keyframes and exact frames refer to."""
    if video.proxy:
        return video.proxy.path, video.proxy_sha256
    return video.remux.path, video.remux_sha256


def rendition_version(video: Video, kind: str) -> str | None:
    """The version of rendition ``kind`` (start of its SHA-256), None when it does not exist."""
    if not getattr(video, kind):
        return None
    return getattr(video, f"{kind}_sha256")[:VERSION_LENGTH] or "0"


def renditions_of(video: Video, owner: str, object_id: int) -> dict:
    urls = {}
    for kind in RENDITIONS:
        version = rendition_version(video, kind)
        kwargs = {"object_id": object_id, "version": version}
        urls[kind] = reverse(f"media-{owner}-{kind}-version", kwargs=kwargs) if version else None
    ready = video.status == Video.Status.READY and any(urls.values())
    return {"renditions": urls, "ready_for_annotation": ready, "proxy_ready": ready and bool(urls["proxy"])}


def media_urls_for(owner: str, object_id: int, video: Video | None = None) -> dict:
    """The media URLs of a packet or video, as the player and the API hand them out.

    ``renditions_json`` is where a player learns (and polls) which renditions exist; with
    ``video`` given, ``renditions`` also lists them now (``{"remux": url|None, "proxy":
    url|None}``, versioned URLs).
    """
    kwargs = {"object_id": object_id}
    frame_zero = reverse(f"media-{owner}-frame", kwargs={**kwargs, "n": 0})
    urls = {
        "renditions_json": reverse(f"media-{owner}-renditions", kwargs=kwargs),
        "proxy": reverse(f"media-{owner}-proxy", kwargs=kwargs),
        "frames": reverse(f"media-{owner}-frames", kwargs=kwargs),
        "frame_png": frame_zero.removesuffix("0.png") + "{n}.png",
        "thumbnails": reverse(f"media-{owner}-thumbs", kwargs=kwargs),
        "thumbnails_meta": reverse(f"media-{owner}-thumbs-meta", kwargs=kwargs),
    }
    if video is not None:
        urls["renditions"] = renditions_of(video, owner, object_id)["renditions"]
    return urls
