from django.conf import settings
from django.db import models

from annotator.models.checked import CheckedModel


class Video(CheckedModel):
    """A source video and everything ingest derives from it.

    The frame table (``frame_table`` file, JSON) is the single source of truth for
    frame <-> time: per-frame presentation timestamps of the proxy and its keyframes.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        PROCESSING = "processing"
        READY = "ready"
        FAILED = "failed"

    title = models.CharField(max_length=300)
    original = models.FileField(upload_to="videos/original/", blank=True)
    original_name = models.CharField(max_length=300, blank=True)
    sha256 = models.CharField(max_length=64, db_index=True, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)

    # Probe results (of the source); frame counts are checked against the proxy.
    codec = models.CharField(max_length=50, blank=True)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    rotation = models.IntegerField(default=0)
    frame_rate_num = models.PositiveIntegerField(default=0)
    frame_rate_den = models.PositiveIntegerField(default=1)
    frame_count = models.PositiveIntegerField(default=0)
    duration = models.FloatField(default=0.0)

    # Derived media. ``remux``: a faststart stream copy of a browser-playable source,
    # made first so annotation can start while ``proxy`` (the seek-friendly encode) is
    # made in the background; both share the frame table (docs/media.md §2.4).
    remux = models.FileField(upload_to="videos/remux/", blank=True)
    remux_sha256 = models.CharField(max_length=64, blank=True)
    proxy = models.FileField(upload_to="videos/proxy/", blank=True)
    proxy_sha256 = models.CharField(max_length=64, blank=True)
    # ``full``: the ladder's on-demand rung, the proxy recipe at the source's own height
    # (the proxy is capped at 720 lines), same frame table; made when someone asks.
    full = models.FileField(upload_to="videos/full/", blank=True)
    full_sha256 = models.CharField(max_length=64, blank=True)
    frame_table = models.FileField(upload_to="videos/frames/", blank=True)
    thumbnails = models.FileField(upload_to="videos/thumbs/", blank=True)
    thumbnail_meta = models.JSONField(default=dict, blank=True)
    # What ingest had to do to the source's timing: the timestamp mode and every frame
    # no decoder could produce (dropped, by source index and pts). See docs/media.md.
    ingest_report = models.JSONField(default=dict, blank=True)

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title

    @property
    def frame_rate(self) -> str:
        return f"{self.frame_rate_num}/{self.frame_rate_den}"
