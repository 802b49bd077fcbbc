"""Resumable uploads (the tus protocol, ``annotator.entry.api.uploads``): one row per upload
being sent in pieces; the bytes so far live in ``MEDIA_ROOT/uploads/<key>.part``.

A video upload registers its video when it is whole; a bundle or submission upload waits,
whole, until the bundle or submission route takes it by its key (once: ``consumed_at``)."""

from django.conf import settings
from django.db import models

from annotator.models.checked import CheckedModel


class ResumableUpload(CheckedModel):
    class Kind(models.TextChoices):
        VIDEO = "video", "video"
        BUNDLE = "bundle", "bundle"
        SUBMISSION = "submission", "submission"

    key = models.CharField(max_length=32, unique=True, help_text="random, in the upload's URL")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.VIDEO)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    length = models.BigIntegerField(help_text="bytes the whole file has (Upload-Length)")
    offset = models.BigIntegerField(default=0, help_text="bytes stored so far (Upload-Offset)")
    filename = models.CharField(max_length=300, blank=True)
    title = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    consumed_at = models.DateTimeField(null=True, blank=True, help_text="when a route took the finished file")
    video = models.ForeignKey("annotator.Video", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    job = models.ForeignKey("annotator.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"upload {self.key} ({self.offset}/{self.length})"
