from datetime import UTC

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotator.base import signing
from annotator.base.canonical import canonical_sha256
from annotator.models.checked import CheckedModel
from annotator.models.immutable import ImmutableModel

# ``prev_sha256`` of the first entry of the chain.
GENESIS_SHA256 = "0" * 64


class AuditEntry(ImmutableModel):
    """One write operation: who, when, what, on which object, with which hashes.

    The entries form a hash chain: entry ``seq`` n carries the SHA-256 of entry n-1
    (``prev_sha256``) and its own ``sha256`` over its fields and that link
    (``chain_sha256``). Editing, deleting or inserting an entry anywhere but at the
    end breaks the chain, which ``manage.py verify_integrity`` reports. Entries are
    appended by ``annotator.models.audit_log.record`` only, under a lock.
    """

    seq = models.PositiveBigIntegerField(unique=True)
    prev_sha256 = models.CharField(max_length=64)
    sha256 = models.CharField(max_length=64)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(default=timezone.now, editable=False)
    operation = models.CharField(max_length=100)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=100)
    packet = models.ForeignKey("annotator.Packet", null=True, on_delete=models.PROTECT, related_name="+")
    hashes = models.JSONField(default=dict)
    details = models.JSONField(default=dict)
    # The Ed25519 signature (hex) over ``sha256`` by the key ``key_id`` (``annotator.base.signing``);
    # None only on entries appended before signing began. Nullable (DJ001 knowingly): SQLite
    # adds a nullable column in place, where a default would rebuild the table without its triggers.
    key_id = models.CharField(max_length=16, null=True)  # noqa: DJ001
    signature = models.CharField(max_length=128, null=True)  # noqa: DJ001

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_entry_object")]

    def __str__(self) -> str:
        return f"{self.operation} {self.object_type}:{self.object_id}"

    def chain_sha256(self) -> str:
        """The SHA-256 this entry must carry, recomputed from its stored fields."""
        return entry_sha256(
            seq=self.seq,
            prev_sha256=self.prev_sha256,
            at=self.at,
            actor_id=self.actor_id,
            operation=self.operation,
            object_type=self.object_type,
            object_id=self.object_id,
            packet_id=self.packet_id,
            hashes=self.hashes,
            details=self.details,
        )

    def signature_problem(self) -> str | None:
        """Why this entry is not authentic, or None: its fields must match its SHA-256, and its
        signature over that SHA-256 must verify under a trusted key (``annotator.base.signing``;
        entries up to the keyring's ``unsigned_through`` were appended before signing began)."""
        if self.chain_sha256() != self.sha256:
            return EDITED
        verified = signing.valid(signing.ENTRY_CONTEXT, self.sha256, self.key_id, self.signature)
        return unsigned_problem(self.seq, self.key_id, self.signature, verified=verified)


EDITED = "its fields do not match its SHA-256 (edited)"


def unsigned_problem(seq: int, kid: str | None, signature: str | None, *, verified: bool) -> str | None:
    """Why an entry whose fields match its SHA-256 is still not authentic, or None:
    ``verified`` says whether its signature verified under the trusted key ``kid``."""
    if verified:
        return None
    if signature is None and seq <= signing.keyring().unsigned_through:
        return None
    if signature is None:
        return "not signed (appended without the signing key: forged)"
    if kid not in signing.keyring().keys:
        return f"signed by an unknown key {kid!r} (forged)"
    return "its signature does not verify (forged or edited)"


def entry_sha256(*, seq, prev_sha256, at, actor_id, operation, object_type, object_id, packet_id, hashes, details):
    """SHA-256 of an audit entry's canonical JSON (time as UTC microseconds).

    Migration 0004 carries a frozen copy of this function for existing entries.
    """
    document = {
        "seq": seq,
        "prev_sha256": prev_sha256,
        "at": at.astimezone(UTC).isoformat(timespec="microseconds"),
        "actor": actor_id,
        "operation": operation,
        "object_type": object_type,
        "object_id": str(object_id),
        "packet": packet_id,
        "hashes": hashes,
        "details": details,
    }
    return canonical_sha256(document)[1]


class Job(CheckedModel):
    """A long-running task (ingest, scoring batch, the work a freeze or a publication
    leaves for after its commit). Progress lives here so any web process can relay it to
    the browser, whatever channel layer is configured. ``packet`` and ``version`` name
    what derived work (``annotator.actions.derived``) is about."""

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
    packet = models.ForeignKey("annotator.Packet", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(
        "annotator.GroundTruthVersion", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"
