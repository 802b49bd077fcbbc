"""Grading agent submissions: uploads, scoring runs pinned to a ground-truth version,
their results, calibration anchors of each version and annotator agreement reports.

Rows are written only by ``annotator.actions.grading``. A submission, a finished
result, a readiness mark and an agreement report never change once written; a
calibration is recomputed only when asked for again (same inputs, same table).
"""

from django.conf import settings
from django.db import models

from annotator.models.checked import CheckedModel
from annotator.models.immutable import ImmutableModel, ImmutableRowError


class Submission(ImmutableModel):
    """One uploaded agent submission, kept byte for byte as uploaded.

    ``content`` is ``None`` only when the upload was over the scorer's byte cap: then
    ``rejected_reason`` holds the scorer's file-layer reason, and the size and SHA-256
    still describe the whole upload.
    """

    packet = models.ForeignKey("annotator.Packet", on_delete=models.PROTECT, related_name="submissions")
    label = models.CharField(max_length=200)
    original_name = models.CharField(max_length=300)
    batch = models.CharField(max_length=36, db_index=True)
    content = models.BinaryField(null=True)
    sha256 = models.CharField(max_length=64, db_index=True)
    size_bytes = models.BigIntegerField()
    rejected_reason = models.TextField(blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["packet_id", "id"]

    def __str__(self) -> str:
        return f"{self.label} ({self.sha256[:12]})"


class ScoringRun(CheckedModel):
    """A batch of submissions scored against one pinned version with one scorer.

    ``params`` are the task parameters handed to the scorer; ``ground_truth_sha256``
    hashes the exact ``gt.json`` bytes scored against (the version's export).
    """

    version = models.ForeignKey("annotator.GroundTruthVersion", on_delete=models.PROTECT, related_name="scoring_runs")
    scorer_id = models.CharField(max_length=100)
    params = models.JSONField(default=dict)
    ground_truth_sha256 = models.CharField(max_length=64)
    scorer_code_sha256 = models.CharField(max_length=64)
    job = models.OneToOneField("annotator.Job", on_delete=models.PROTECT, related_name="scoring_run")
    total = models.PositiveIntegerField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.scorer_id} on version {self.version_id}"


class SubmissionScore(CheckedModel):
    """The scorer's output for one submission in one run: the exact bytes it writes.

    Created ``pending``; written once to ``scored`` (the scorer ran, whatever the
    submission held) or ``error`` (the scorer itself failed); never changed after.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        SCORED = "scored"
        ERROR = "error"

    run = models.ForeignKey(ScoringRun, on_delete=models.PROTECT, related_name="results")
    submission = models.ForeignKey(Submission, on_delete=models.PROTECT, related_name="results")
    version = models.ForeignKey("annotator.GroundTruthVersion", on_delete=models.PROTECT, related_name="+")
    scorer_id = models.CharField(max_length=100)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    reward = models.FloatField(null=True)
    reason = models.TextField(blank=True)
    details = models.JSONField(null=True)
    reward_json = models.BinaryField(null=True)
    reward_txt = models.BinaryField(null=True)
    details_json = models.BinaryField(null=True)
    error = models.TextField(blank=True)
    scorer_seconds = models.FloatField(null=True)
    scored_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "submission"], name="one_score_per_run_submission")]
        indexes = [models.Index(fields=["version", "scorer_id", "status"], name="score_board_idx")]

    def __str__(self) -> str:
        return f"score {self.pk}: submission {self.submission_id} ({self.status})"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            stored = type(self).objects.filter(pk=self.pk).values_list("status", flat=True).first()
            if stored not in (None, self.Status.PENDING):
                raise ImmutableRowError(f"score {self.pk} is final")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRowError(f"score {self.pk} is kept")


class VersionCalibration(CheckedModel):
    """The calibration anchors of one version under one scorer (``python -m scoring
    anchors``), with the expectations checked: ``ok`` or ``blocked`` (``problems`` says why)."""

    class Status(models.TextChoices):
        OK = "ok"
        BLOCKED = "blocked"

    version = models.ForeignKey("annotator.GroundTruthVersion", on_delete=models.PROTECT, related_name="calibrations")
    scorer_id = models.CharField(max_length=100)
    params = models.JSONField(default=dict)
    anchors = models.JSONField(default=list)
    status = models.CharField(max_length=20, choices=Status.choices)
    problems = models.JSONField(default=list)
    scorer_code_sha256 = models.CharField(max_length=64)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["version_id", "scorer_id"]
        constraints = [models.UniqueConstraint(fields=["version", "scorer_id"], name="one_calibration_per_scorer")]

    def __str__(self) -> str:
        return f"calibration of version {self.version_id} under {self.scorer_id}: {self.status}"


class VersionReadiness(ImmutableModel):
    """A maintainer's mark that a version is ready for grading, given only when its
    calibration under the task scorer holds."""

    version = models.OneToOneField("annotator.GroundTruthVersion", on_delete=models.PROTECT, related_name="readiness")
    scorer_id = models.CharField(max_length=100)
    anchors = models.JSONField(default=list)
    marked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    marked_at = models.DateTimeField(auto_now_add=True)


class AgreementReport(ImmutableModel):
    """Annotator A vs B (and each vs an adjudicated version) for one packet's frozen ledgers."""

    packet = models.ForeignKey("annotator.Packet", on_delete=models.PROTECT, related_name="agreement_reports")
    scorer_id = models.CharField(max_length=100)
    ledger_a_sha256 = models.CharField(max_length=64)
    ledger_b_sha256 = models.CharField(max_length=64)
    version = models.ForeignKey(
        "annotator.GroundTruthVersion", null=True, on_delete=models.PROTECT, related_name="agreement_reports"
    )
    report = models.JSONField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class ScoringBatch(CheckedModel):
    """One ``annotator.score_batch`` task's share of a scoring run, with its lease.

    Written only by ``annotator.actions.scoring_leases``: a task takes the lease
    (``lease_owner``, ``lease_expires``) before scoring and renews it while it scores; the
    beat sweep sends the batch again when its lease ran out (the worker vanished) or when it
    was never taken while no scoring worker showed a sign of life (the message was lost),
    at most ``FRAMELEDGER_SCORING_MAX_ATTEMPTS`` sends in all, then the run ends ``failed``.
    """

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="batches")
    index = models.PositiveIntegerField()
    result_ids = models.JSONField(default=list)
    attempts = models.PositiveIntegerField(default=1)
    queued_at = models.DateTimeField()
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires = models.DateTimeField(null=True, blank=True)
    renewed_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="one_batch_per_run_index")]
        indexes = [models.Index(fields=["done_at", "run"], name="scoring_batch_open_idx")]

    def __str__(self) -> str:
        return f"batch {self.index} of run {self.run_id}"
