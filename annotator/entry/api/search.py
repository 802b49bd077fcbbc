"""Moment search (docs/api.md, "Moment search"; docs/retrieval.md).

- ``GET /api/packets/<id>/search/``: which searches the packet supports and why
  (``text``, ``example``, ``reason``, the known ``texts``, the index's status); with
  ``?text=…`` and/or ``?start_frame=…&end_frame=…`` (and ``k``) the search itself.
- ``POST /api/packets/<id>/search/``: ``{"text": "…", "example": [start_frame,
  end_frame], "k": 10}`` (either or both) -> the best ``k`` grid-legal intervals,
  ``{"results": [{"rank", "start", "end", "start_frame", "end_frame", "score"}]}``.
  Who: :func:`annotator.reads.access.access_packet_search`; anyone else gets 404.
  ``409 index_not_ready`` when the index is missing, building, failed or damaged.
- ``GET /api/videos/<id>/search-index/``: the index's status (maintainers).
- ``POST /api/videos/<id>/search-index/``: rebuild it (maintainers; ``202``); multipart
  ``features`` (``.npz`` key ``features`` or ``.npy``, ``L x D``), ``clip_length``
  (seconds per row) and optional ``text_features`` (``.npz``: ``texts``, ``embeddings``)
  store uploaded CLIP features first.
"""

from __future__ import annotations

import math

from django.urls import path
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.actions.search import do_rebuild_search_index, do_upload_search_features
from annotator.base.errors import Conflict, InvalidInput
from annotator.base.urlconverters import parse_id
from annotator.entry.api.body import JSONObjectParser
from annotator.models import Video, VideoSearchIndex
from annotator.reads import access
from annotator.reads.search import (
    DEFAULT_K,
    MAX_K,
    MAX_TEXT_LENGTH,
    capabilities,
    index_status,
    search,
    seconds_of_frame,
)


def _index(video) -> VideoSearchIndex | None:
    return VideoSearchIndex.objects.filter(video=video).first()


def _k(value) -> int:
    if value in (None, ""):
        return DEFAULT_K
    k = parse_id(value)
    if k is None or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be a whole number from 1 to {MAX_K}", field="k")
    return k


def _text(value) -> str:
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise InvalidInput("text must be a string", field="text")
    if len(value) > MAX_TEXT_LENGTH:
        raise InvalidInput(f"text is limited to {MAX_TEXT_LENGTH} characters", field="text")
    return value.strip()


def _example(start, end, packet) -> tuple[float, float] | None:
    if start in (None, "") and end in (None, ""):
        return None
    first, last = parse_id(start), parse_id(end)
    frames = packet.video.frame_count or 1
    if first is None or last is None or not 0 <= first < last < frames:
        raise InvalidInput(f"the example needs whole frames 0 <= start_frame < end_frame < {frames}", field="example")
    return seconds_of_frame(first, packet), seconds_of_frame(last, packet)


class PacketSearchView(APIView):
    parser_classes = [JSONObjectParser]

    def get(self, request, packet_id):
        packet = access.access_packet_search(request.user, packet_id).packet
        row = _index(packet.video)
        params = request.query_params
        text = _text(params.get("text"))
        example = _example(params.get("start_frame"), params.get("end_frame"), packet)
        body = capabilities(packet, row)
        if text or example is not None:
            body |= search(packet, row, text=text, example=example, k=_k(params.get("k")))
        return Response(body)

    def post(self, request, packet_id):
        packet = access.access_packet_search(request.user, packet_id).packet
        row = _index(packet.video)
        data = request.data
        pair = data.get("example")
        if pair is not None and not (isinstance(pair, list) and len(pair) == 2):
            raise InvalidInput("example must be [start_frame, end_frame]", field="example")
        example = _example(*(pair or (None, None)), packet)
        text = _text(data.get("text"))
        return Response(
            capabilities(packet, row) | search(packet, row, text=text, example=example, k=_k(data.get("k")))
        )


class VideoSearchIndexView(APIView):
    parser_classes = [MultiPartParser, JSONObjectParser]

    def get(self, request, video_id):
        video = access.access_video(request.user, video_id)
        return Response({"video": video.pk, "index": index_status(_index(video))})

    def post(self, request, video_id):
        video = access.access_video(request.user, video_id)
        if video.status != Video.Status.READY:
            raise Conflict(f"video {video.pk} is not ready (status {video.status})")
        upload = request.FILES.get("features")
        if upload is not None:
            clip = request.data.get("clip_length")
            try:
                clip_length = float(clip)
            except (TypeError, ValueError):
                raise InvalidInput("clip_length (seconds per feature row) is required", field="clip_length") from None
            if not math.isfinite(clip_length):
                raise InvalidInput("clip_length must be a finite number", field="clip_length")
            text = request.FILES.get("text_features")
            do_upload_search_features(  # the uploads where they lie: judged and copied in chunks
                video, actor=request.user, features=upload, name=upload.name, clip_length=clip_length,
                text_features=text,
            )  # fmt: skip
        else:
            do_rebuild_search_index(video, actor=request.user)
        return Response({"video": video.pk, "index": index_status(_index(video))}, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("packets/<id:packet_id>/search/", PacketSearchView.as_view(), name="api-packet-search"),
    path("videos/<id:video_id>/search-index/", VideoSearchIndexView.as_view(), name="api-video-search-index"),
]
