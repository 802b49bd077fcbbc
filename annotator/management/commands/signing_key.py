"""``manage.py signing_key``: the public key audit entries and exports are signed with.

Prints the key id and the public key (base64 of its 32 raw bytes; ``--pem`` as a PEM block),
which is what an export's verifier needs (``python -m deploy.verify_export``). ``--create``
makes the key file when none is configured (for an audit log that already has entries: those
stay unsigned and are trusted as they stand); ``--rotate`` replaces the key file with a new key,
keeping the old public key so that the entries it signed stay verifiable.
"""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from django.core.management.base import BaseCommand

from annotator.base import signing
from annotator.models import AuditEntry


class Command(BaseCommand):
    help = "Print the public signing key (key id and base64); --create makes the key, --rotate replaces it."

    def add_arguments(self, parser):
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--create", action="store_true", help="make the key file if no key is configured")
        group.add_argument("--rotate", action="store_true", help="replace the key file with a new key")
        parser.add_argument("--pem", action="store_true", help="print the public key as a PEM block")
        parser.add_argument("--all", action="store_true", help="print every trusted public key, by id")

    def handle(self, *args, **options):
        if options["create"]:
            head = AuditEntry.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
            if signing.make_key(head_seq=head):
                unsigned = f" (the {head} entries already in the audit log stay unsigned)" if head else ""
                self.stderr.write(f"made {signing.key_path()}{unsigned}")
        if options["rotate"]:
            old, new = signing.rotate_key()
            self.stderr.write(f"rotated: {old} -> {new}; {old} stays trusted for what it signed")
        if options["all"]:
            for kid, public in sorted(signing.keyring().keys.items()):
                self.stdout.write(f"{kid} {signing.public_text(public)}")
            return
        public = signing.private_key().public_key()
        if options["pem"]:
            pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            self.stdout.write(pem.decode("ascii").rstrip("\n"))
            return
        self.stdout.write(f"key id: {signing.key_id(public)}")
        self.stdout.write(f"public key: {signing.public_text(public)}")
