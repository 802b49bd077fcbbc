from django.db import models

from annotator.models.checked import CheckedModel


class VideoSearchIndex(CheckedModel):
    """The moment-search index of one video: one vector per clip (``clip_length``
    seconds), from the first feature source available (docs/retrieval.md, "the search
    index"). Files live under the media root; the row says where and how they were made.
    Written only by ``annotator.actions.search``."""

    class Source(models.TextChoices):
        UPLOADED = "uploaded"  # precomputed CLIP features (moment_detr layout)
        ENCODER = "encoder"  # the locally installed encoder named in the settings
        DESCRIPTOR = "descriptor"  # the embedded low-level descriptor (query-by-example only)

    class Status(models.TextChoices):
        PENDING = "pending"
        BUILDING = "building"
        READY = "ready"
        FAILED = "failed"
        UNAVAILABLE = "unavailable"  # no feature source at all (no features, no media)

    video = models.OneToOneField("annotator.Video", on_delete=models.CASCADE, related_name="search_index")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    source = models.CharField(max_length=20, choices=Source.choices, blank=True)
    # Uploaded features (a path under the media root) and their clip length; optional
    # text features in the same space (``texts`` + ``embeddings``).
    features_upload = models.CharField(max_length=500, blank=True)
    text_features_upload = models.CharField(max_length=500, blank=True)
    upload_clip_length = models.FloatField(null=True, blank=True)
    clip_length = models.FloatField(null=True, blank=True)
    clip_count = models.PositiveIntegerField(default=0)
    dim = models.PositiveIntegerField(default=0)
    vectors = models.CharField(max_length=500, blank=True)  # .npy under the media root
    text_vectors = models.CharField(max_length=500, blank=True)  # .npz under the media root, or ""
    encoder = models.CharField(max_length=300, blank=True)  # what made the vectors
    built_at = models.DateTimeField(null=True, blank=True)
    build_seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"search index of video {self.video_id} ({self.status})"
