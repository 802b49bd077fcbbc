"""Accounts: invitations, roles, deactivation and password links (maintainers' pages).

Django's own auth machinery does the work: ``User`` rows, groups, and the password
reset token generator for one-time links. A link carries ``uidb64`` and a token made
by ``default_token_generator``; the token hashes the password and the last sign-in,
so it stops working once the password is set (one use), once the person signs in,
and after ``PASSWORD_RESET_TIMEOUT``. Nothing is e-mailed: the maintainer is shown the link to
send. An invited person has an unusable password until they follow the link.

Roles are group memberships. ``maintainers`` is the one that grants anything
(``annotator.reads.access``); ``annotators`` and ``adjudicators`` only mark people when a
project's pools are chosen (``annotator.actions.projects``). Who sees what on a packet still goes by
the role on that packet alone.

Every write here records one audit entry (no password or token ever goes into one).

The pages call the ``check_*`` of each write: it refuses bad form input (and a person the
actor may not manage) with ``InvalidInput`` / ``Conflict``, refuses an actor who may not
administer accounts now (``access.administration_refusal``: separation of duties, 403) and
then calls the ``do_*``, which keeps its own rules for callers without a form. The operator's
``manage.py people`` calls the ``do_*`` with no actor.
"""

from __future__ import annotations

import functools
import re

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotator.actions.tokens import do_revoke_tokens
from annotator.base.errors import Conflict, InvalidInput, NotPermitted
from annotator.models import Packet
from annotator.models.audit_log import record
from annotator.reads import access, realtime
from annotator.reads.access import MAINTAINERS_GROUP

ROLE_GROUPS = {"annotator": "annotators", "adjudicator": "adjudicators", "maintainer": MAINTAINERS_GROUP}
# ASCII only: a Cyrillic "а" or a dotless "ı" makes a name that reads as another person's
# ("annotator_а", "admın") in every list, audit entry and assignment.
USERNAME = re.compile(r"^[A-Za-z0-9_.@+-]{1,150}$")
MAX_EMAIL_CHARS = 254  # the column's length (``User.email``)
# Characters that read alike in the fonts the pages use, folded together (after lower case).
_LOOKALIKE = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "5": "s", "_": "-", ".": "-"})


def username_skeleton(username: str) -> str:
    """What a user name looks like: lower case, look-alike characters and ``rn``/``vv``
    folded (``maintainer`` and ``rnaintainer``, ``annotator_l`` and ``annotator_1``)."""
    return username.lower().replace("rn", "m").replace("vv", "w").translate(_LOOKALIKE)


def roles_of(user) -> list[str]:
    """The person's role groups (read from ``prefetch_related("groups")`` when the caller
    prefetched them: no query per person in a list)."""
    names = {group.name for group in user.groups.all()}
    return [role for role, group in ROLE_GROUPS.items() if group in names]


def packet_roles_of(user) -> list[str]:
    """The roles a person holds on packets (annotator, adjudicator), whatever their groups."""
    return packet_roles_by_person([user.pk])[user.pk]


def packet_roles_by_person(user_ids) -> dict[int, list[str]]:
    """``packet_roles_of`` for many people: two queries whatever their number."""
    ids = list(user_ids)
    annotating = set(Packet.objects.filter(annotator_a__in=ids).values_list("annotator_a", flat=True).distinct())
    annotating |= set(Packet.objects.filter(annotator_b__in=ids).values_list("annotator_b", flat=True).distinct())
    adjudicating = set(Packet.objects.filter(adjudicator__in=ids).values_list("adjudicator", flat=True).distinct())
    return {
        pk: [role for role, held in (("annotator", annotating), ("adjudicator", adjudicating)) if pk in held]
        for pk in ids
    }


def validate_roles(roles) -> list[str]:
    roles = [str(r) for r in roles]
    unknown = sorted(set(roles) - set(ROLE_GROUPS))
    if unknown:
        raise InvalidInput(f"unknown role(s): {', '.join(unknown)}", field="roles")
    if not roles:
        raise InvalidInput("choose at least one role", field="roles")
    return [r for r in ROLE_GROUPS if r in roles]


def password_link_path(user) -> str:
    """The one-time path (``/people/set-password/<uidb64>/<token>/``) for ``user``."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    return f"/people/set-password/{uidb64}/{default_token_generator.make_token(user)}/"


def ensure_may_manage(actor, person) -> None:
    """A superuser's account is managed by superusers only (a maintainer is not one)."""
    if person.is_superuser and not (actor is not None and actor.is_superuser):
        raise Conflict("only a superuser can change a superuser's account", field="person")


def ensure_may_administer(actor) -> None:
    """Separation of duties: nobody blind on a packet (nor anyone who may hold a blind
    person's password) invites, changes roles, activity or passwords of accounts, or issues
    links (``docs/workflow.md``). The refusal names who can. No actor: the operator."""
    if actor is None:
        return
    refusal = access.administration_refusal(actor)
    if refusal is not None:
        names = ", ".join(u.username for u in access.people_administrators()) or "the operator (manage.py people)"
        raise NotPermitted(f"{refusal}: {names}", field="actor")


def _set_groups(user, roles: list[str]) -> None:
    for role, name in ROLE_GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        if role in roles:
            user.groups.add(group)
        else:
            user.groups.remove(group)


@transaction.atomic
def do_invite_person(*, actor, username: str, email: str = "", roles) -> tuple:
    """Create an account with no usable password; return ``(user, one-time path)``."""
    username = username.strip()
    if not USERNAME.match(username):
        raise InvalidInput(
            "a user name is 1 to 150 ASCII letters, digits or . @ + - _ (no look-alike letters of other scripts)",
            field="username",
        )
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise Conflict(f"the user name {username!r} is taken", field="username")
    skeleton = username_skeleton(username)
    for existing in User.objects.values_list("username", flat=True).iterator():
        if username_skeleton(existing) == skeleton:
            raise Conflict(f"the user name {username!r} reads like {existing!r}; choose another", field="username")
    roles = validate_roles(roles)
    user = User(username=username, email=email.strip())
    user.set_unusable_password()
    user.save()
    _set_groups(user, roles)
    record(actor, "invite_person", user, details={"username": username, "roles": roles})
    return user, password_link_path(user)


@transaction.atomic
def do_set_roles(*, actor, person, roles) -> list[str]:
    """Replace ``person``'s roles. A maintainer cannot drop their own maintainer role
    (someone must be left to manage people)."""
    roles = validate_roles(roles)
    ensure_may_manage(actor, person)
    if actor is not None and person.pk == actor.pk and "maintainer" not in roles:
        raise Conflict("you cannot remove your own maintainer role", field="roles")
    before = roles_of(person)
    _set_groups(person, roles)
    record(actor, "set_roles", person, details={"username": person.username, "before": before, "after": roles})
    if before != roles:  # a socket opened with another role checks it again
        transaction.on_commit(functools.partial(realtime.revoke_person, person.pk))
    return roles


@transaction.atomic
def do_set_active(*, actor, person, active: bool) -> None:
    """Deactivate (or reactivate) an account. A deactivated person cannot sign in,
    and ``annotator.reads.access`` gives them no role on any packet; their ledgers and
    assignments stay as they are (reassign an empty ledger: ``do_reassign_annotator``)."""
    ensure_may_manage(actor, person)
    if actor is not None and person.pk == actor.pk and not active:
        raise Conflict("you cannot deactivate your own account", field="active")
    if person.is_active == active:
        return
    person.is_active = active
    person.save(update_fields=["is_active"])
    record(actor, "activate_person" if active else "deactivate_person", person, details={"username": person.username})
    if not active:  # a reactivated account starts with no token
        do_revoke_tokens(actor=actor, person=person, reason="account deactivated")
    if not active:  # their open sockets close and hear nothing more
        transaction.on_commit(functools.partial(realtime.revoke_person, person.pk))


@transaction.atomic
def do_issue_password_link(*, actor, person) -> str:
    """A one-time path with which ``person`` sets a new password (their old password
    keeps working until they do)."""
    ensure_may_manage(actor, person)
    if not person.is_active:
        raise Conflict("the account is deactivated; reactivate it first", field="active")
    record(actor, "issue_password_link", person, details={"username": person.username})
    return password_link_path(person)


def validate_new_password(person, password: str, confirmation: str) -> None:
    if password != confirmation:
        raise InvalidInput("the two passwords differ", field="password")
    try:
        password_validation.validate_password(password, person)
    except ValidationError as error:
        raise InvalidInput(" ".join(error.messages), field="password") from None


@transaction.atomic
def do_set_password(*, actor, person, password: str, confirmation: str) -> None:
    """Set ``person``'s password: by a maintainer directly, or by the person through a
    one-time link (then ``actor`` is the person; the caller checked the token)."""
    if actor is None or actor.pk != person.pk:
        ensure_may_manage(actor, person)
    validate_new_password(person, password, confirmation)
    if not person.is_active:
        raise Conflict("the account is deactivated", field="active")
    person.set_password(password)
    person.save(update_fields=["password"])
    operation = "set_own_password" if actor is not None and actor.pk == person.pk else "set_password"
    record(actor, operation, person, details={"username": person.username})
    do_revoke_tokens(actor=actor, person=person, reason="password changed")


@transaction.atomic
def do_change_own_password(*, person, password: str) -> None:
    """A signed-in person changes their own password (``/account/password/``; the caller
    checked the old one). Recorded as ``change_own_password``, which leaves who may hold the
    password as it was (``annotator.reads.separation``: whoever knew the old one could have
    typed it); their API tokens are revoked."""
    person.set_password(password)
    person.save(update_fields=["password"])
    record(person, "change_own_password", person, details={"username": person.username})
    do_revoke_tokens(actor=person, person=person, reason="password changed")


def _text(value, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text", field=field)
    return value


def check_invite_person(*, actor, username, email="", roles) -> tuple:
    """The invitation form: a user name (``do_invite_person`` judges it), an e-mail
    address of at most ``MAX_EMAIL_CHARS`` characters (the column's), known roles."""
    ensure_may_administer(actor)
    email = _text(email, "email").strip()
    if len(email) > MAX_EMAIL_CHARS:
        raise InvalidInput(f"an e-mail address is at most {MAX_EMAIL_CHARS} characters", field="email")
    roles = validate_roles(roles)
    return do_invite_person(actor=actor, username=_text(username, "username"), email=email, roles=roles)


def check_set_roles(*, actor, person, roles) -> list[str]:
    """The roles form: known roles, for a person the actor may manage."""
    ensure_may_administer(actor)
    roles = validate_roles(roles)
    ensure_may_manage(actor, person)
    return do_set_roles(actor=actor, person=person, roles=roles)


def check_set_active(*, actor, person, active) -> None:
    """The activate / deactivate buttons."""
    ensure_may_administer(actor)
    if not isinstance(active, bool):
        raise InvalidInput("active is true or false", field="active")
    ensure_may_manage(actor, person)
    do_set_active(actor=actor, person=person, active=active)


def check_issue_password_link(*, actor, person) -> str:
    """The one-time link button: for a person the actor may manage."""
    ensure_may_administer(actor)
    ensure_may_manage(actor, person)
    return do_issue_password_link(actor=actor, person=person)


def check_set_password(*, actor, person, password, confirmation) -> None:
    """A password typed twice (by a maintainer, or by the person through a one-time
    link: then ``actor`` is the person), judged by Django's password validators."""
    password, confirmation = _text(password, "password"), _text(confirmation, "password")
    if actor is None or actor.pk != person.pk:
        ensure_may_administer(actor)
        ensure_may_manage(actor, person)
    validate_new_password(person, password, confirmation)
    do_set_password(actor=actor, person=person, password=password, confirmation=confirmation)


def check_change_own_password(*, actor, old_password, password, confirmation) -> None:
    """The signed-in password form: the current password, then a new one typed twice."""
    old_password = _text(old_password, "old_password")
    password, confirmation = _text(password, "password"), _text(confirmation, "password")
    if not actor.check_password(old_password):
        raise InvalidInput("the current password is not right", field="old_password")
    validate_new_password(actor, password, confirmation)
    do_change_own_password(person=actor, password=password)
