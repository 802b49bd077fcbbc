"""Media URLs (mounted at the site root by ``deploy/urls.py``).

For each owner (``packet``: anyone on the packet; ``video``: maintainers):

=====================================================  ==============================
``/media/<owner>s/<id>/renditions.json``               ``media-<owner>-renditions``
``/media/<owner>s/<id>/remux/<version>.mp4``           ``media-<owner>-remux-version``
``/media/<owner>s/<id>/proxy/<version>.mp4``           ``media-<owner>-proxy-version``
``/media/<owner>s/<id>/full/<version>.mp4``            ``media-<owner>-full-version``
``/media/<owner>s/<id>/proxy.mp4``                     ``media-<owner>-proxy``
``/media/<owner>s/<id>/frames.json``                   ``media-<owner>-frames``
``/media/<owner>s/<id>/frames/<n>.png``                ``media-<owner>-frame``
``/media/<owner>s/<id>/frames/<n>.jpg``                ``media-<owner>-frame-jpg``
``/media/<owner>s/<id>/thumbs.jpg``                    ``media-<owner>-thumbs``
``/media/<owner>s/<id>/thumbs.json``                   ``media-<owner>-thumbs-meta``
=====================================================  ==============================
"""

from django.urls import path

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.entry import media_views as views

urlpatterns = []
for owner, prefix in (("packet", "media/packets/<id:object_id>/"), ("video", "media/videos/<id:object_id>/")):
    extra = {"owner": owner}
    urlpatterns += [
        path(prefix + "renditions.json", views.renditions, extra, name=f"media-{owner}-renditions"),
        path(
            prefix + "remux/<str:version>.mp4",
            views.rendition,
            {**extra, "kind": "remux"},
            name=f"media-{owner}-remux-version",
        ),
        path(
            prefix + "proxy/<str:version>.mp4",
            views.rendition,
            {**extra, "kind": "proxy"},
            name=f"media-{owner}-proxy-version",
        ),
        path(
            prefix + "full/<str:version>.mp4",
            views.rendition,
            {**extra, "kind": "full"},
            name=f"media-{owner}-full-version",
        ),
        path(prefix + "proxy.mp4", views.proxy, extra, name=f"media-{owner}-proxy"),
        path(prefix + "frames.json", views.frames_json, extra, name=f"media-{owner}-frames"),
        path(prefix + "frames/<id:n>.png", views.frame, {**extra, "fmt": "png"}, name=f"media-{owner}-frame"),
        path(prefix + "frames/<id:n>.jpg", views.frame, {**extra, "fmt": "jpg"}, name=f"media-{owner}-frame-jpg"),
        path(prefix + "thumbs.jpg", views.thumbnails, extra, name=f"media-{owner}-thumbs"),
        path(prefix + "thumbs.json", views.thumbnails_meta, extra, name=f"media-{owner}-thumbs-meta"),
    ]
