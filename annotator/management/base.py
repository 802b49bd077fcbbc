from django.core.management.base import BaseCommand


class VersionOptionCommand(BaseCommand):
    """A command whose ``--version`` names a ground-truth version, not Django's version."""

    def add_base_argument(self, parser, *args, **kwargs):
        if "--version" in args:
            return
        super().add_base_argument(parser, *args, **kwargs)
