"""Resumable uploads over the tus protocol 1.0.0 (https://tus.io/protocols/resumable-upload),
core and the ``creation`` and ``termination`` extensions; maintainers only. One mechanism for
videos, executable bundles and agent submissions (``Upload-Metadata`` ``kind``).

- ``OPTIONS /api/uploads/`` -> ``204`` with ``Tus-Version``, ``Tus-Extension``, ``Tus-Max-Size``;
- ``POST /api/uploads/`` with ``Upload-Length`` and ``Upload-Metadata`` (``filename``,
  ``title`` and ``kind``: ``video`` (the default; a title is required), ``bundle`` or
  ``submission``, base64) -> ``201`` with ``Location: /api/uploads/<key>/``; the length may be
  at most the limit of the kind's route (``413`` above);
- ``HEAD /api/uploads/<key>/`` -> ``200`` with ``Upload-Offset`` and ``Upload-Length``
  (``Cache-Control: no-store``);
- ``PATCH /api/uploads/<key>/`` with ``Content-Type: application/offset+octet-stream`` and
  ``Upload-Offset`` (the server's offset, else ``409``) -> ``204`` with the new
  ``Upload-Offset``; the piece that completes a video registers it and queues its ingest (as
  ``POST /api/videos/``); a finished bundle or submission waits for its route to take it by
  its key (``bundle_upload``, ``file_upload``, ``archive_upload``), once;
- ``DELETE /api/uploads/<key>/`` -> ``204``: an unfinished upload (or a finished bundle or
  submission no route took) and its bytes removed;
- ``GET /api/uploads/<key>/`` (not tus) -> JSON
  ``{key, kind, length, offset, complete, consumed, video, job}``.

Every answer carries ``Tus-Resumable: 1.0.0``; a request other than ``OPTIONS`` without it
gets ``412``. Errors have the API's JSON error body. Pieces are at most
``FRAMELEDGER_UPLOAD_PIECE_BYTES`` (the body limit of ``/api/uploads/<key>/``).
"""

from __future__ import annotations

import base64
import binascii

from django.urls import reverse
from rest_framework import status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.uploads import do_append_upload, do_create_upload, do_delete_upload, max_bytes
from annotator.base.errors import InvalidInput, WorkflowError
from annotator.models import ResumableUpload
from annotator.reads import access
from annotator.reads.present import job_view, video_view

TUS_VERSION = "1.0.0"
OFFSET_TYPE = "application/offset+octet-stream"


class TusVersionMissing(WorkflowError):
    status = 412
    code = "tus_version"


class OffsetStream(BaseParser):
    """Lets DRF accept ``application/offset+octet-stream``; the view reads the stream itself."""

    media_type = OFFSET_TYPE

    def parse(self, stream, media_type=None, parser_context=None):
        return {}


def tus_headers(response: Response) -> Response:
    response["Tus-Resumable"] = TUS_VERSION
    response["Cache-Control"] = "no-store"
    return response


def require_tus(request) -> None:
    if request.headers.get("Tus-Resumable") != TUS_VERSION:
        raise TusVersionMissing(f"Tus-Resumable: {TUS_VERSION} is required")


def header_int(request, name: str, *, required: bool = True) -> int | None:
    value = request.headers.get(name)
    if value is None:
        if required:
            raise InvalidInput(f"the {name} header is required", field=name)
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 19:
        raise InvalidInput(f"{name} must be a whole number of bytes", field=name)
    return int(value)


def parse_metadata(header: str) -> dict[str, str]:
    """``Upload-Metadata``: comma-separated ``key base64value`` pairs (the value may be absent)."""
    metadata = {}
    for pair in filter(None, (part.strip() for part in header.split(","))):
        key, _, value = pair.partition(" ")
        try:
            metadata[key] = base64.b64decode(value.strip(), validate=True).decode("utf-8") if value else ""
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidInput(f"Upload-Metadata {key!r} is not base64 UTF-8", field="Upload-Metadata") from None
    return metadata


def upload_view(upload: ResumableUpload) -> dict:
    return {
        "key": upload.key,
        "kind": upload.kind,
        "length": upload.length,
        "offset": upload.offset,
        "complete": upload.completed_at is not None,
        "consumed": upload.consumed_at is not None,
        "video": video_view(upload.video) if upload.video else None,
        "job": job_view(upload.job) if upload.job else None,
    }


class TusView(APIView):
    parser_classes = [OffsetStream]

    def finalize_response(self, request, response, *args, **kwargs):
        return tus_headers(super().finalize_response(request, response, *args, **kwargs))


class UploadListView(TusView):
    def options(self, request, *args, **kwargs):
        response = Response(status=status.HTTP_204_NO_CONTENT)
        response["Tus-Version"] = TUS_VERSION
        response["Tus-Extension"] = "creation,termination"
        response["Tus-Max-Size"] = str(max(max_bytes(kind) for kind in ResumableUpload.Kind.values))
        return response

    def post(self, request):
        access.require_maintainer(request.user)
        require_tus(request)
        metadata = parse_metadata(request.headers.get("Upload-Metadata", ""))
        upload = do_create_upload(
            actor=request.user,
            length=header_int(request, "Upload-Length"),
            filename=metadata.get("filename", ""),
            title=metadata.get("title", ""),
            kind=metadata.get("kind") or ResumableUpload.Kind.VIDEO,
        )
        response = Response(upload_view(upload), status=status.HTTP_201_CREATED)
        response["Location"] = reverse("upload-detail", kwargs={"key": upload.key})
        response["Upload-Offset"] = "0"
        return response


class UploadDetailView(TusView):
    def _offsets(self, response: Response, upload: ResumableUpload) -> Response:
        response["Upload-Offset"] = str(upload.offset)
        response["Upload-Length"] = str(upload.length)
        return response

    def head(self, request, key: str):
        upload = access.access_upload(request.user, key)
        require_tus(request)
        return self._offsets(Response(status=status.HTTP_200_OK), upload)

    def get(self, request, key: str):
        upload = access.access_upload(request.user, key)
        return self._offsets(Response(upload_view(upload)), upload)

    def patch(self, request, key: str):
        upload = access.access_upload(request.user, key)
        require_tus(request)
        if request.content_type.split(";")[0].strip() != OFFSET_TYPE:
            raise InvalidInput(f"Content-Type must be {OFFSET_TYPE}", field="Content-Type")
        offset = header_int(request, "Upload-Offset")
        declared = header_int(request, "Content-Length", required=False)
        upload = do_append_upload(
            actor=request.user, upload=upload, offset=offset, stream=request._request, declared=declared
        )
        response = Response(status=status.HTTP_204_NO_CONTENT)
        if upload.video_id is not None:
            response["X-Video-Id"] = str(upload.video_id)
            response["X-Job-Id"] = str(upload.job_id)
        return self._offsets(response, upload)

    def delete(self, request, key: str):
        upload = access.access_upload(request.user, key)
        require_tus(request)
        do_delete_upload(upload=upload)
        return Response(status=status.HTTP_204_NO_CONTENT)
