"""Grading endpoints (``annotator.entry.api.grading``), included under ``/api/``."""

from django.urls import path

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.entry.api import grading as views

urlpatterns = [
    path("packets/<id:packet_id>/submissions/", views.SubmissionListView.as_view(), name="api-submissions"),
    path("packets/<id:packet_id>/scoring-runs/", views.ScoringRunListView.as_view(), name="api-scoring-runs"),
    path("packets/<id:packet_id>/agreement/", views.AgreementView.as_view(), name="api-agreement"),
    path("submissions/<id:submission_id>/", views.SubmissionDetailView.as_view(), name="api-submission"),
    path(
        "submissions/<id:submission_id>/content/",
        views.SubmissionContentView.as_view(),
        name="api-submission-content",
    ),
    path("scoring-runs/<id:run_id>/", views.ScoringRunDetailView.as_view(), name="api-scoring-run"),
    path("scoring-runs/<id:run_id>/scores/", views.ScoringRunScoresView.as_view(), name="api-scoring-run-scores"),
    path("scores/<id:score_id>/", views.ScoreDetailView.as_view(), name="api-score"),
    path("scores/<id:score_id>/files/<str:name>", views.ScoreFileView.as_view(), name="api-score-file"),
    path("scores/<id:score_id>/diagnostics/", views.ScoreDiagnosticsView.as_view(), name="api-score-diagnostics"),
    path("versions/<id:version_id>/leaderboard/", views.LeaderboardView.as_view(), name="api-leaderboard"),
    path(
        "versions/<id:version_id>/leaderboard.csv",
        views.LeaderboardView.as_view(),
        {"export": "csv"},
        name="api-leaderboard-csv",
    ),
    path(
        "versions/<id:version_id>/leaderboard.json",
        views.LeaderboardView.as_view(),
        {"export": "json"},
        name="api-leaderboard-json",
    ),
    path("versions/<id:version_id>/calibration/", views.CalibrationView.as_view(), name="api-calibration"),
    path("versions/<id:version_id>/ready/", views.ReadyView.as_view(), name="api-version-ready"),
]
