"""Import published moment annotations (QVHighlights, Charades-STA) as moment-query
packets with a provisional version, one packet per video (docs/workflow.md)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.actions.moment_imports import check_import_moment_packets
from annotator.base.errors import WorkflowError
from annotator.base.moment_sources import MAX_FILE_BYTES, SOURCES


def _read(path: Path) -> bytes:
    """The file's bytes, at most one past the limit (the check refuses such a file)."""
    with path.open("rb") as file:
        return file.read(MAX_FILE_BYTES + 1)


class Command(BaseCommand):
    help = "Import QVHighlights / Charades-STA rows as moment packets (one per video) with a provisional version."

    def add_arguments(self, parser):
        parser.add_argument("annotations", type=Path, help="e.g. data/qvhighlights/highlight_val_release.jsonl")
        parser.add_argument("--source", required=True, choices=sorted(SOURCES))
        parser.add_argument("--reannotated", type=Path, nargs="*", default=[], help="Charades-STA re-annotation CSVs")
        parser.add_argument("--limit-videos", type=int, default=None, help="only the first N videos of the file")
        parser.add_argument("--videos", default="", help="comma-separated video ids (instead of --limit-videos)")
        parser.add_argument("--annotator-a", required=True)
        parser.add_argument("--annotator-b", required=True)
        parser.add_argument("--adjudicator", required=True)
        parser.add_argument("--actor", default=None, help="username recorded in the audit log")

    def _user(self, name):
        if name is None:
            return None
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise CommandError(f"no user {name!r}")
        return user

    def handle(self, *args, annotations: Path, source: str, reannotated, limit_videos, videos, **options):
        people = [self._user(options[k]) for k in ("annotator_a", "annotator_b", "adjudicator")]
        try:
            data = _read(annotations)
            extra = [_read(path) for path in reannotated]
        except OSError as exc:
            raise CommandError(f"cannot read: {exc}") from None
        try:
            report = check_import_moment_packets(
                actor=self._user(options["actor"]), source=source, file_name=annotations.name, data=data,
                reannotated=extra, annotator_a=people[0], annotator_b=people[1], adjudicator=people[2],
                limit_videos=limit_videos, video_ids=videos.split(","),
            )  # fmt: skip
        except WorkflowError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"read {annotations.name}: {len(data)} bytes; imported {len(report['packets'])} videos")
        for row in report["packets"]:
            self.stdout.write(
                f"packet {row['packet']:>5}  {row['video_id']:<28} {row['queries']:>3} queries  "
                f"version {row['version']}  {row['state']}"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"{report['created']} created, {report['updated']} updated, {report['unchanged']} unchanged; "
                f"{report['clipped']} window end(s) clipped to the duration, "
                f"{report['dropped']} empty window(s) dropped"
            )
        )
