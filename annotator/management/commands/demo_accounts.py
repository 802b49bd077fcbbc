"""Print the demo's sign-in box again: the address and the four demo accounts with the
passwords the last ``bin/run-demo`` set (kept in ``var/demo-accounts.txt``, mode 0600)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

ACCOUNTS_FILE = "demo-accounts.txt"


def accounts_path() -> Path:
    return Path(settings.VAR_DIR) / ACCOUNTS_FILE


class Command(BaseCommand):
    help = "Print the demo's sign-in box (URL, accounts, passwords) that bin/run-demo printed."

    def handle(self, *args, **options):
        path = accounts_path()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CommandError(f"no demo accounts yet ({path} is missing): start the demo with bin/run-demo") from None
        self.stdout.write(text, ending="")
