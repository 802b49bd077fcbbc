import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotator.models.checked import CheckedModel
from annotator.models.immutable import ImmutableRowError


class Packet(CheckedModel):
    """A video + task kind + instructions, sent to two annotators and one adjudicator.

    ``sha256`` hashes the packet's canonical content (see ``annotator.base.canonical``) at
    creation; it is quoted in every manifest built from this packet.
    """

    title = models.CharField(max_length=300)
    video = models.ForeignKey("annotator.Video", on_delete=models.PROTECT, related_name="packets")
    task_kind = models.ForeignKey("annotator.TaskKind", on_delete=models.PROTECT, related_name="packets")
    instructions = models.TextField(blank=True)
    # Per-packet settings of the task kind (e.g. the two players of a tennis match, a moment
    # grid), checked by the family's adapter (``FamilyAdapter.check_parameters``).
    parameters = models.JSONField(default=dict, blank=True)
    project = models.ForeignKey(
        "annotator.Project", null=True, blank=True, on_delete=models.PROTECT, related_name="packets"
    )
    annotator_a = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    annotator_b = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                name="packet_three_different_people",
                condition=~Q(annotator_a=F("annotator_b"))
                & ~Q(annotator_a=F("adjudicator"))
                & ~Q(annotator_b=F("adjudicator")),
            )
        ]

    def __str__(self) -> str:
        return self.title


# What a frozen ledger's hash and attestation are about: never changed after freeze
# (the database trigger of migration 0004 refuses the same columns).
FROZEN_LEDGER_FIELDS = frozenset(
    {"packet", "side", "annotator", "version", "frozen_at", "attestation", "canonical_json", "sha256"}
)


class LedgerQuerySet(models.QuerySet):
    """Bulk writes that would change or delete a frozen ledger are refused."""

    def update(self, **kwargs):
        touched = {name.removesuffix("_id") for name in kwargs} & FROZEN_LEDGER_FIELDS
        if touched and self.filter(frozen_at__isnull=False).exists():
            raise ImmutableRowError(f"frozen ledgers cannot change ({', '.join(sorted(touched))})")
        return super().update(**kwargs)

    def delete(self):
        if self.filter(frozen_at__isnull=False).exists():
            raise ImmutableRowError("frozen ledgers cannot be deleted")
        return super().delete()


class Ledger(CheckedModel):
    """One annotator's events for one packet. ``version`` guards every write.

    Once frozen (``do_freeze_ledger``) the row never changes again: ``save()`` and
    ``delete()`` refuse, and so do the queryset and the database.
    """

    class Side(models.TextChoices):
        A = "A"
        B = "B"

    packet = models.ForeignKey(Packet, on_delete=models.PROTECT, related_name="ledgers")
    side = models.CharField(max_length=1, choices=Side.choices)
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    version = models.PositiveIntegerField(default=0)
    frozen_at = models.DateTimeField(null=True, blank=True)
    attestation = models.TextField(blank=True)
    canonical_json = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = LedgerQuerySet.as_manager()

    class Meta:
        ordering = ["packet_id", "side"]
        constraints = [models.UniqueConstraint(fields=["packet", "side"], name="one_ledger_per_side")]

    def __str__(self) -> str:
        return f"{self.packet_id}/{self.side}"

    def save(self, *args, **kwargs):
        if getattr(self, "_frozen_in_db", False):
            raise ImmutableRowError(f"ledger {self.pk} is frozen (SHA-256 {self.sha256}); it cannot be saved again")
        super().save(*args, **kwargs)
        self._frozen_in_db = self.frozen_at is not None

    def delete(self, *args, **kwargs):
        if getattr(self, "_frozen_in_db", False):
            raise ImmutableRowError(f"ledger {self.pk} is frozen; it cannot be deleted")
        return super().delete(*args, **kwargs)

    @classmethod
    def from_db(cls, db, field_names, values):
        ledger = super().from_db(db, field_names, values)
        ledger._frozen_in_db = ledger.__dict__.get("frozen_at") is not None
        return ledger

    def refresh_from_db(self, *args, **kwargs):
        super().refresh_from_db(*args, **kwargs)
        self._frozen_in_db = self.__dict__.get("frozen_at") is not None

    @property
    def is_frozen(self) -> bool:
        return self.frozen_at is not None

    @property
    def etag(self) -> str:
        return f'"ledger-{self.pk}-v{self.version}"'


class LedgerEvent(CheckedModel):
    """One event of a ledger; ``data`` holds the fields the task kind defines."""

    ledger = models.ForeignKey(Ledger, on_delete=models.CASCADE, related_name="events")
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["ledger_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"event {self.uid} of ledger {self.ledger_id}"

    def save(self, *args, **kwargs):
        self._refuse_if_frozen()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self._refuse_if_frozen()
        return super().delete(*args, **kwargs)

    def _refuse_if_frozen(self) -> None:
        if Ledger.objects.filter(pk=self.ledger_id, frozen_at__isnull=False).exists():
            raise ImmutableRowError(f"ledger {self.ledger_id} is frozen; its events cannot change")
