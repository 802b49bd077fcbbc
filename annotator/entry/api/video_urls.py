"""Video and job endpoints; included under ``/api/`` by ``annotator.entry.api.urls``."""

from django.urls import path

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.entry.api import uploads, videos

urlpatterns = [
    path("videos/", videos.VideoListView.as_view(), name="video-list"),
    path("videos/<id:video_id>/", videos.VideoDetailView.as_view(), name="video-detail"),
    path("uploads/", uploads.UploadListView.as_view(), name="upload-list"),
    path("uploads/<str:key>/", uploads.UploadDetailView.as_view(), name="upload-detail"),
    path("jobs/<id:job_id>/", videos.JobDetailView.as_view(), name="job-detail"),
    path(
        "packets/<id:packet_id>/renditions/full/",
        videos.FullRenditionView.as_view(),
        name="api-packet-full-rendition",
    ),
]
