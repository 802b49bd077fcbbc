"""``manage.py people``: account administration by the operator of the server.

The people pages refuse account administration to a maintainer who is blind on a packet
(separation of duties, ``docs/workflow.md``). Where no maintainer may administer accounts
(a one-maintainer team whose maintainer annotates), the operator of the server does it here::

    manage.py people invite NAME --role annotator [--role maintainer] [--email ADDRESS]
    manage.py people link NAME          # a one-time password link (path) for NAME
    manage.py people roles NAME --role maintainer
    manage.py people deactivate NAME | activate NAME

Each calls the same ``check_*`` as the pages, with no actor: the audit log records the
operation with an empty actor, the operator's. Whoever runs it has the server's database in
reach anyway, so it adds no path the shell did not have, and it is recorded.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.actions import people
from annotator.base.errors import WorkflowError

OPERATIONS = ("invite", "link", "roles", "activate", "deactivate")


class Command(BaseCommand):
    help = "Account administration by the operator (invite, link, roles, activate, deactivate); audited."

    def add_arguments(self, parser):
        parser.add_argument("operation", choices=OPERATIONS)
        parser.add_argument("username")
        parser.add_argument("--role", action="append", default=[], choices=list(people.ROLE_GROUPS))
        parser.add_argument("--email", default="")

    def handle(self, *args, operation, username, role, email, **options):
        try:
            if operation == "invite":
                user, path = people.check_invite_person(actor=None, username=username, email=email, roles=role)
                self.stdout.write(f"invited {user.username}: {path}")
                return
            person = get_user_model().objects.filter(username=username).first()
            if person is None:
                raise CommandError(f"no user {username!r}")
            if operation == "link":
                self.stdout.write(people.check_issue_password_link(actor=None, person=person))
            elif operation == "roles":
                self.stdout.write(", ".join(people.check_set_roles(actor=None, person=person, roles=role)))
            else:
                people.check_set_active(actor=None, person=person, active=operation == "activate")
                self.stdout.write(f"{username}: {operation}d")
        except WorkflowError as error:
            raise CommandError(error.message) from None
