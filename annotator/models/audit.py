from django.conf import settings
from django.db import models

from annotator.models.immutable import ImmutableModel


class AuditEntry(ImmutableModel):
    """One write operation: who, when, what, on which object, with which hashes."""

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    operation = models.CharField(max_length=100)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=100)
    packet = models.ForeignKey("annotator.Packet", null=True, on_delete=models.PROTECT, related_name="+")
    hashes = models.JSONField(default=dict)
    details = models.JSONField(default=dict)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.operation} {self.object_type}:{self.object_id}"


class Job(models.Model):
    """A long-running task (ingest, scoring batch). Progress lives here so any web
    process can relay it to the browser, whatever channel layer is configured."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    kind = models.CharField(max_length=50)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    message = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    video = models.ForeignKey("annotator.Video", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"
