"""Executable moment-search submissions (``build.sh`` / ``run.sh`` bundles).

A ``BundleRun`` is one bundle run against one pinned ground-truth version: the bundle's
bytes, the limits it ran under, what the machine enforced, each stage's timing, exit
and captured logs, and, once done, the ``Submission`` of the rows that counted and its
score. Written only by ``annotator.actions.bundles``.
"""

from django.conf import settings
from django.db import models

from annotator.models.checked import CheckedModel


class BundleRun(CheckedModel):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"  # the rows were scored (a failed build scores 0 and is done too)
        ERROR = "error"  # the runner could not run it (refused, bad bundle found late)

    version = models.ForeignKey("annotator.GroundTruthVersion", on_delete=models.PROTECT, related_name="bundle_runs")
    label = models.CharField(max_length=200)
    bundle = models.BinaryField()
    bundle_sha256 = models.CharField(max_length=64)
    reference = models.BooleanField(default=False)
    device = models.CharField(max_length=10, default="cpu")
    queue = models.CharField(max_length=100)
    limits = models.JSONField(default=dict)
    enforcement = models.JSONField(default=dict)
    stages = models.JSONField(default=list)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    outcome = models.TextField(blank=True)
    submission = models.OneToOneField(
        "annotator.Submission", null=True, on_delete=models.PROTECT, related_name="bundle_run"
    )
    score = models.ForeignKey("annotator.SubmissionScore", null=True, on_delete=models.PROTECT, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The worker running it (host:pid) and when it last said so; the beat sweep
    # (annotator.bundle_sweep) ends a run whose heartbeat is older than the lease.
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"bundle run {self.pk}: {self.label} ({self.status})"
