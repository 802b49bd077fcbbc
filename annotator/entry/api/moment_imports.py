"""``POST /api/moment-imports/`` (maintainers only; anyone else gets a 404): published
moment annotations in, one moment packet per video with a provisional version out.

Multipart: ``source`` (``qvhighlights`` | ``charades-sta``), ``file`` (the release
``.jsonl``), ``reannotated`` (Charades-STA re-annotation CSVs, any number),
``annotator_a``, ``annotator_b``, ``adjudicator`` (usernames), and either ``videos``
(comma-separated ids) or ``limit_videos``. 201 with the report; 400 naming the line of
the first bad row, and then nothing is stored.
"""

from __future__ import annotations

from django.urls import path
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.moment_imports import do_import_moment_packets
from annotator.actions.packets import user_by_username
from annotator.base.canonical import sha256_hex
from annotator.base.errors import InvalidInput
from annotator.base.moment_sources import SourceError, read_jsonl, select
from annotator.reads import access

MAX_FILE_BYTES = 64 * 1024**2


def _limit(value) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput("limit_videos must be a whole number", field="limit_videos") from None


class MomentImportView(APIView):
    def post(self, request):
        access.require_maintainer(request.user)
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("upload the annotation .jsonl in the field 'file'", field="file")
        uploads = [upload, *request.FILES.getlist("reannotated")]
        if any(u.size > MAX_FILE_BYTES for u in uploads):
            raise InvalidInput(f"annotation files are limited to {MAX_FILE_BYTES} bytes", field="file")
        people = [user_by_username(request.data.get(k) or "") for k in ("annotator_a", "annotator_b", "adjudicator")]
        data = upload.read()
        try:
            videos = read_jsonl(
                request.data.get("source") or "",
                data,
                name=upload.name,
                reannotated=[u.read() for u in uploads[1:]],
            )
            ids = [v for v in (request.data.get("videos") or "").split(",") if v]
            chosen = select(videos, limit=_limit(request.data.get("limit_videos")), video_ids=ids)
        except SourceError as error:
            raise InvalidInput(str(error), field="file") from None
        report = do_import_moment_packets(
            chosen, actor=request.user, annotator_a=people[0], annotator_b=people[1], adjudicator=people[2],
            file_name=upload.name, file_sha256=sha256_hex(data),
        )  # fmt: skip
        return Response(report, status=status.HTTP_201_CREATED)


urlpatterns = [path("moment-imports/", MomentImportView.as_view(), name="api-moment-imports")]
