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
from annotator.media.views import media_urls_for
from annotator.models import Job, Video


def job_view(job: Job) -> dict:
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "progress": job.progress,
        "message": job.message,
        "result": job.result,
        "video": job.video_id,
        "created_at": job.created_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
    }


def video_view(video: Video) -> dict:
    ready = video.status == Video.Status.READY
    latest_job = video.jobs.order_by("-created_at", "-id").first()
    return {
        "id": video.pk,
        "title": video.title,
        "status": video.status,
        "error": video.error,
        "original_name": video.original_name,
        "size_bytes": video.size_bytes,
        "sha256": video.sha256,
        "codec": video.codec,
        "width": video.width,
        "height": video.height,
        "rotation": video.rotation,
        "frame_rate": [video.frame_rate_num, video.frame_rate_den],
        "frame_count": video.frame_count,
        "duration": video.duration,
        "proxy_sha256": video.proxy_sha256,
        "ingest_report": video.ingest_report,
        "ready_for_annotation": ready,
        "proxy_ready": ready and bool(video.proxy),
        "remux_sha256": video.remux_sha256,
        "media": media_urls_for("video", video.pk, video) if ready else None,
        "job": job_view(latest_job) if latest_job else None,
        "created_at": video.created_at.isoformat(),
    }


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
