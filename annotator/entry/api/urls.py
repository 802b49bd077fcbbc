from django.urls import include, path

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.entry.api import tokens, views

urlpatterns = [
    path("auth/token/", tokens.TokenView.as_view(), name="api-token"),
    path("auth/tokens/", tokens.TokenListView.as_view(), name="api-tokens"),
    path("auth/tokens/<id:token_id>/", tokens.TokenDetailView.as_view(), name="api-token-detail"),
    path("me/", views.MeView.as_view(), name="api-me"),
    path("users/", views.UserListView.as_view(), name="api-users"),
    path("task-kinds/", views.TaskKindListView.as_view(), name="api-task-kinds"),
    path("task-kinds/<slug:slug>/", views.TaskKindDetailView.as_view(), name="api-task-kind"),
    path("packets/", views.PacketListView.as_view(), name="api-packets"),
    path("packets/<id:packet_id>/", views.PacketDetailView.as_view(), name="api-packet"),
    path("packets/<id:packet_id>/ledger/", views.OwnLedgerView.as_view(), name="api-own-ledger"),
    path("packets/<id:packet_id>/ledger/events/", views.LedgerEventListView.as_view(), name="api-ledger-events"),
    path(
        "packets/<id:packet_id>/ledger/events/<uuid:event_uid>/",
        views.LedgerEventDetailView.as_view(),
        name="api-ledger-event",
    ),
    path("packets/<id:packet_id>/ledger/freeze/", views.FreezeView.as_view(), name="api-ledger-freeze"),
    path("packets/<id:packet_id>/ledgers/<str:side>/", views.LedgerBySideView.as_view(), name="api-ledger-side"),
    path("packets/<id:packet_id>/union/", views.UnionView.as_view(), name="api-union"),
    path(
        "packets/<id:packet_id>/union/items/<id:position>/decision/",
        views.DecisionView.as_view(),
        name="api-union-decision",
    ),
    path("packets/<id:packet_id>/publish/", views.PublishView.as_view(), name="api-publish"),
    path("packets/<id:packet_id>/versions/", views.PacketVersionListView.as_view(), name="api-packet-versions"),
    path("packets/<id:packet_id>/audit/", views.AuditLogView.as_view(), name="api-audit"),
    path("versions/<id:version_id>/", views.VersionDetailView.as_view(), name="api-version"),
    path("versions/<id:version_id>/export/", views.VersionExportView.as_view(), name="api-version-export"),
    path("", include("annotator.entry.api.video_urls")),
    path("", include("annotator.entry.api.grading_urls")),
    path("", include("annotator.entry.api.bundles")),
    path("", include("annotator.entry.api.moment_imports")),
    path("", include("annotator.entry.api.search")),
]
