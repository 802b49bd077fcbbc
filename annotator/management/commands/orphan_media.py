"""``manage.py orphan_media``: list the media files no row points to; ``--delete`` removes
them (``annotator.reads.media_orphans`` says what counts)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from annotator.actions.media_orphans import do_remove_orphan_media
from annotator.reads.media_orphans import orphan_media


class Command(BaseCommand):
    help = "List (or with --delete remove) media files that no video, upload or running job points to."

    def add_arguments(self, parser):
        parser.add_argument("--delete", action="store_true", help="remove them")
        parser.add_argument(
            "--min-age",
            type=float,
            default=3600.0,
            help="leave out anything modified less than this many seconds ago (default 3600: writes in flight)",
        )

    def handle(self, *args, **options):
        if options["delete"]:
            orphans = do_remove_orphan_media(min_age=options["min_age"])
        else:
            orphans = orphan_media(options["min_age"])
        for orphan in orphans:
            self.stdout.write(f"{orphan.name}\t{orphan.size}\t{orphan.why}")
        total = sum(o.size for o in orphans)
        verb = "removed" if options["delete"] else "found (run with --delete to remove them)"
        self.stdout.write(f"{len(orphans)} orphan media entries, {total} bytes, {verb}")
