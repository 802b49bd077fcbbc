"""Grading pages; included at the root by ``frontend.urls``."""

from django.urls import path

from frontend import grading_views

urlpatterns = [
    path("grading/packets/<int:packet_id>/", grading_views.packet_grading, name="grading-packet"),
    path("grading/packets/<int:packet_id>/agreement/", grading_views.agreement, name="grading-agreement"),
    path("grading/versions/<int:version_id>/", grading_views.version_grading, name="grading-version"),
    path("grading/scores/<int:score_id>/", grading_views.score_diagnostics, name="grading-score"),
]
