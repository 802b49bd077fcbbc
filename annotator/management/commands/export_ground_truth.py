"""Write the task-ready files of a ground-truth version into a folder."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from annotator.base.canonical import sha256_hex
from annotator.management.base import VersionOptionCommand
from annotator.models import GroundTruthVersion
from annotator.reads.export import export_files


class Command(VersionOptionCommand):
    help = "Export gt.json, vocabulary.json, the oracle submission and manifest.json of a version."

    def add_arguments(self, parser):
        parser.add_argument("--version", type=int, required=True, dest="version_id", help="ground-truth version id")
        parser.add_argument("--out", type=Path, required=True, help="folder to write (created if missing)")

    def handle(self, *args, version_id: int, out: Path, **options):
        version = (
            GroundTruthVersion.objects.select_related("packet__task_kind", "packet__video")
            .filter(pk=version_id)
            .first()
        )
        if version is None:
            raise CommandError(f"no ground-truth version {version_id}")
        files = export_files(version)
        out.mkdir(parents=True, exist_ok=True)
        for position, (name, data) in enumerate(sorted(files.items()), start=1):
            (out / name).write_bytes(data)
            self.stdout.write(f"[{position}/{len(files)}] {name}: {len(data)} bytes, SHA-256 {sha256_hex(data)}")
        self.stdout.write(self.style.SUCCESS(f"exported {version} to {out}"))
