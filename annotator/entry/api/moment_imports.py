"""``POST /api/moment-imports/`` (maintainers only; anyone else gets a 404): published
moment annotations in, one moment packet per video with a provisional version out.

Multipart: ``source`` (``qvhighlights`` | ``charades-sta``), ``file`` (the release
``.jsonl``), ``reannotated`` (Charades-STA re-annotation CSVs, any number),
``annotator_a``, ``annotator_b``, ``adjudicator`` (usernames), and either ``videos``
(comma-separated ids) or ``limit_videos``. 201 with the report; 400 naming the line of
the first bad row, and then nothing is stored. Each file is at most
``moment_sources.MAX_FILE_BYTES`` (64 MiB), as on the import page
(``actions.moment_imports.check_import_moment_packets`` checks both).
"""

from __future__ import annotations

from django.urls import path
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.moment_imports import check_import_moment_packets
from annotator.actions.packets import user_by_username
from annotator.base.errors import InvalidInput
from annotator.base.moment_sources import MAX_FILE_BYTES, count_rows, files_refusal, rows_refusal, size_refusal
from annotator.reads import access


def _refuse_before_reading(uploads) -> None:
    """The caps of ``check_import_moment_packets`` (size, files, rows) judged on the uploaded
    files where they lie, in chunks, before one is read into memory."""
    refusal = files_refusal(len(uploads) - 1)
    for upload in uploads:
        refusal = refusal or size_refusal(upload.size) or rows_refusal(count_rows(upload.chunks()))
        upload.seek(0)
    if refusal is not None:
        raise InvalidInput(refusal, field="file")


class MomentImportView(APIView):
    def post(self, request):
        access.require_maintainer(request.user)
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("upload the annotation .jsonl in the field 'file'", field="file")
        extra = request.FILES.getlist("reannotated")
        _refuse_before_reading([upload, *extra])
        people = [user_by_username(request.data.get(k) or "") for k in ("annotator_a", "annotator_b", "adjudicator")]
        # One byte past the limit is enough for the check to refuse a file.
        report = check_import_moment_packets(
            actor=request.user, source=request.data.get("source") or "", file_name=upload.name,
            data=upload.read(MAX_FILE_BYTES + 1),
            reannotated=[u.read(MAX_FILE_BYTES + 1) for u in extra],
            annotator_a=people[0], annotator_b=people[1], adjudicator=people[2],
            limit_videos=request.data.get("limit_videos"), video_ids=(request.data.get("videos") or "").split(","),
        )  # fmt: skip
        return Response(report, status=status.HTTP_201_CREATED)


urlpatterns = [path("moment-imports/", MomentImportView.as_view(), name="api-moment-imports")]
