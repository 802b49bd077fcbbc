"""Video endpoints for maintainers: upload (queues ingest), video detail, job progress.

- ``POST /api/videos/`` (multipart ``file``, ``title``) -> ``202`` with the video and its ingest job;
- ``GET /api/videos/`` -> every video, newest first;
- ``GET /api/videos/<id>/`` -> probe results, status, error, ingest report, media URLs once ready
  (``ready_for_annotation``, ``proxy_ready``, ``media.renditions``: ``{remux, proxy}`` URLs);
- ``DELETE /api/videos/<id>/`` -> ``204``: the video and its files removed (audited); ``409``
  while a packet uses it or its ingest runs;
- ``GET /api/jobs/<id>/`` -> status, progress (0..1), message, result;
- ``GET /api/packets/<id>/renditions/full/`` -> the full-height rendition's state (anyone on
  the packet): ``status`` (``none``, ``queued``, ``running``, ``ready``, ``failed``,
  ``not_needed``, ``unavailable``), ``height``, ``proxy_height``, ``progress``, ``message``,
  ``url`` (its versioned media URL once ready); ``POST`` asks for it: ``202`` queued (or
  being made), ``200`` when it exists, ``409`` when the proxy already has the video's height.

Everyone else gets 404, as for any object they may not know about (packet routes: anyone
not on the packet).
"""

from __future__ import annotations

from django.urls import reverse
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.full_rung import asked_for_full, do_request_full_rendition, full_rung_state, without_progress
from annotator.actions.ingest import do_register_upload
from annotator.actions.videos import do_delete_video
from annotator.entry.api.body import JSONObjectParser
from annotator.models import Video
from annotator.reads import access
from annotator.reads.media import rendition_version
from annotator.reads.present import job_view, video_view


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


def _full_view(state: dict, video: Video, packet_id: int) -> dict:
    version = rendition_version(video, "full") if state["status"] == "ready" else None
    url = reverse("media-packet-full-version", kwargs={"object_id": packet_id, "version": version}) if version else None
    return {**state, "url": url}


class FullRenditionView(APIView):
    """The ladder's on-demand rung for a packet's video (``annotator.actions.full_rung``)."""

    def get(self, request, packet_id: int):
        packet_access = access.access_full_rendition(request.user, packet_id)
        video = packet_access.packet.video
        state = full_rung_state(video)
        if not access.sees_rendition_progress(packet_access, asked_for_full(video, request.user)):
            state = without_progress(state)
        return Response(_full_view(state, video, packet_id))

    def post(self, request, packet_id: int):
        video = access.access_full_rendition(request.user, packet_id).packet.video
        state, _queued = do_request_full_rendition(actor=request.user, video=video)
        video.refresh_from_db()
        code = status.HTTP_200_OK if state["status"] == "ready" else status.HTTP_202_ACCEPTED
        return Response(_full_view(state, video, packet_id), status=code)
