"""Import a published GTEA Gaze+ label file as the next provisional version of a packet."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.actions.versions import check_import_provisional_version
from annotator.base.canonical import sha256_hex
from annotator.base.errors import WorkflowError
from annotator.models import Packet
from annotator.reads.documents import version_events
from annotator.reads.label_imports import MAX_LABEL_BYTES


class Command(BaseCommand):
    help = "Import <verb><noun,...> (start-end) labels (eggs folded into egg) into a provisional version."

    def add_arguments(self, parser):
        parser.add_argument("labels", type=Path, help="the label file, e.g. Ahmad_American.txt")
        parser.add_argument("--packet", type=int, required=True, help="id of an action-ledger packet")
        parser.add_argument("--actor", default=None, help="username recorded in the audit log")

    def handle(self, *args, labels: Path, packet: int, actor: str | None, **options):
        packet_row = Packet.objects.select_related("task_kind", "video").filter(pk=packet).first()
        if packet_row is None:
            raise CommandError(f"no packet {packet}")
        if packet_row.task_kind.schema["family"] != "actions":
            raise CommandError(f"packet {packet} is a {packet_row.task_kind.slug} packet, not an action ledger")
        user = None
        if actor:
            user = get_user_model().objects.filter(username=actor).first()
            if user is None:
                raise CommandError(f"no user {actor!r}")
        try:
            with labels.open("rb") as file:
                data = file.read(MAX_LABEL_BYTES + 1)  # one byte past the limit: the check refuses it
        except OSError as exc:
            raise CommandError(f"cannot read {labels}: {exc}") from None
        self.stdout.write(f"[1/3] read {labels.name}: {len(data)} bytes, SHA-256 {sha256_hex(data)}")
        try:
            version = check_import_provisional_version(packet_row, actor=user, file_name=labels.name, data=data)
        except WorkflowError as exc:
            raise CommandError(f"{labels.name}: {exc.message}") from None
        actions = version_events(version)
        verbs = {a["verb"] for a in actions}
        nouns = {n for a in actions for n in a["nouns"]}
        self.stdout.write(f"[2/3] checked {len(actions)} actions, {len(verbs)} verbs, {len(nouns)} nouns")
        self.stdout.write(
            self.style.SUCCESS(f"[3/3] provisional version {version.number} (id {version.pk}) SHA-256 {version.sha256}")
        )
