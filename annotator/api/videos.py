"""Video endpoints for maintainers: upload (queues ingest), video detail, job progress.

- ``POST /api/videos/`` (multipart ``file``, ``title``) -> ``202`` with the video and its ingest job;
- ``GET /api/videos/`` -> every video, newest first;
- ``GET /api/videos/<id>/`` -> probe results, status, error, ingest report, media URLs once ready
  (``ready_for_annotation``, ``proxy_ready``, ``media.renditions``: ``{remux, proxy}`` URLs);
- ``DELETE /api/videos/<id>/`` -> ``204``: the video and its files removed (audited); ``409``
  while a packet uses it or its ingest runs;
- ``GET /api/jobs/<id>/`` -> status, progress (0..1), message, result.

Everyone else gets 404, as for any object they may not know about.
"""

from __future__ import annotations

from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.actions.ingest import do_register_upload
from annotator.actions.videos import do_delete_video
from annotator.api.body import JSONObjectParser
from annotator.models import Video
from annotator.present import job_view, video_view


class VideoListView(APIView):
    parser_classes = [MultiPartParser, FormParser, JSONObjectParser]

    def get(self, request):
        access.require_maintainer(request.user)
        return Response([video_view(v) for v in Video.objects.all()])

    def post(self, request):
        access.require_maintainer(request.user)
        video, job = do_register_upload(
            actor=request.user,
            uploaded_file=request.FILES.get("file"),
            title=request.data.get("title", ""),
        )
        return Response({"video": video_view(video), "job": job_view(job)}, status=status.HTTP_202_ACCEPTED)


class VideoDetailView(APIView):
    def get(self, request, video_id: int):
        return Response(video_view(access.access_video(request.user, video_id)))

    def delete(self, request, video_id: int):
        """Delete a video no packet uses, with its files (maintainers; audited)."""
        video = access.access_video(request.user, video_id)
        do_delete_video(actor=request.user, video=video)
        return Response(status=status.HTTP_204_NO_CONTENT)


class JobDetailView(APIView):
    def get(self, request, job_id: int):
        return Response(job_view(access.access_job(request.user, job_id)))
