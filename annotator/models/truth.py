from django.conf import settings
from django.db import models

from annotator.models.checked import CheckedModel
from annotator.models.immutable import ImmutableModel


class Union(CheckedModel):
    """The aligned union of a packet's two frozen ledgers (built once, then decided)."""

    packet = models.OneToOneField("annotator.Packet", on_delete=models.PROTECT, related_name="union")
    ledger_a_sha256 = models.CharField(max_length=64)
    ledger_b_sha256 = models.CharField(max_length=64)
    scorer_id = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"union of packet {self.packet_id}"


class UnionItem(CheckedModel):
    """One aligned item: agreed, conflicting, only in A or only in B."""

    class Status(models.TextChoices):
        AGREED = "agreed"
        CONFLICTING = "conflicting"
        A_ONLY = "a_only"
        B_ONLY = "b_only"

    union = models.ForeignKey(Union, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices)
    a_index = models.IntegerField(null=True)
    b_index = models.IntegerField(null=True)
    a_value = models.JSONField(null=True)
    b_value = models.JSONField(null=True)
    differing_fields = models.JSONField(default=list)
    boundary_deltas = models.JSONField(default=dict)

    class Meta:
        ordering = ["union_id", "position"]
        constraints = [models.UniqueConstraint(fields=["union", "position"], name="union_item_position")]

    def __str__(self) -> str:
        return f"union {self.union_id} item {self.position} ({self.status})"


class Decision(CheckedModel):
    """The adjudicator's current decision on a union item (history is in the audit log)."""

    class Action(models.TextChoices):
        TAKE_A = "take_a"
        TAKE_B = "take_b"
        EDIT = "edit"
        DROP = "drop"
        UNKNOWN = "unknown"

    item = models.OneToOneField(UnionItem, on_delete=models.CASCADE, related_name="decision")
    action = models.CharField(max_length=20, choices=Action.choices)
    final_value = models.JSONField(null=True)
    rationale = models.TextField()
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.action} on item {self.item_id}"


class GroundTruthVersion(ImmutableModel):
    """A frozen, versioned ground truth for a packet. Never edited: a fix is a new version.

    ``sha256`` covers ``canonical_json``; ``manifest_sha256`` covers ``manifest`` (its
    canonical JSON). Reads verify both (``annotator.reads.integrity``).
    """

    class Tier(models.TextChoices):
        PROVISIONAL = "provisional"
        ADJUDICATED = "adjudicated"

    packet = models.ForeignKey("annotator.Packet", on_delete=models.PROTECT, related_name="versions")
    tier = models.CharField(max_length=20, choices=Tier.choices)
    number = models.PositiveIntegerField()
    canonical_json = models.TextField()
    sha256 = models.CharField(max_length=64)
    manifest = models.JSONField()
    manifest_sha256 = models.CharField(max_length=64)
    changelog = models.JSONField(default=dict)
    source = models.CharField(max_length=300)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["packet_id", "tier", "number"]
        constraints = [
            models.UniqueConstraint(fields=["packet", "tier", "number"], name="one_number_per_packet_tier"),
        ]

    def __str__(self) -> str:
        return f"{self.packet_id}/{self.tier}/v{self.number}"
