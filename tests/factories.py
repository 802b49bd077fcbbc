"""Small factories for the test suites (no JSON dumps)."""

from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager

from django.contrib.auth.models import Group, User
from django.db import DEFAULT_DB_ALIAS, connections
from rest_framework.test import APIClient

from annotator.actions.packets import do_create_packet
from annotator.base.builtin_kinds import install_builtin_rows
from annotator.models import TaskKind, Video

GTEA_FRAMES = 25692


@contextmanager
def after_commit():
    """Run what the block leaves for after its commit, as a committed transaction would:
    the on-commit callbacks (inside a test's transaction they never run by themselves) with
    Celery tasks inline (``task_always_eager``), the real tasks, no broker. A freeze or a
    publication made in it leaves its derived work done: the agreement report, the anchors."""
    from deploy.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    connection = connections[DEFAULT_DB_ALIAS]
    start = len(connection.run_on_commit)
    try:
        yield
        # Run them once and drop them (with those they add), so an enclosing
        # ``captureOnCommitCallbacks(execute=True)`` does not run them again.
        while len(connection.run_on_commit) > start:
            callbacks = connection.run_on_commit[start:]
            del connection.run_on_commit[start:]
            for _, callback, _ in callbacks:
                callback()
    finally:
        app.conf.task_always_eager = before


def ensure_builtin_rows() -> None:
    """The rows the data migration made, again: a transactional test flushes them."""
    install_builtin_rows(TaskKind, Group)


def make_user(username: str, *, maintainer: bool = False) -> User:
    user = User.objects.create_user(username, password=f"{username}-password")
    if maintainer:
        make_maintainer(user)
    return user


def make_maintainer(user: User) -> User:
    """Add ``user`` to the maintainers group (a person may hold several roles)."""
    ensure_builtin_rows()
    user.groups.add(Group.objects.get(name="maintainers"))
    return user


def make_ready_video(title: str = "GTEA Ahmad American", *, frame_count: int = GTEA_FRAMES, fps=(24, 1)) -> Video:
    """A video row as ingest leaves it (the media files themselves are not needed here)."""
    return Video.objects.create(
        title=title,
        sha256=hashlib.sha256(title.encode()).hexdigest(),
        status=Video.Status.READY,
        codec="h264",
        width=160,
        height=96,
        frame_rate_num=fps[0],
        frame_rate_den=fps[1],
        frame_count=frame_count,
        duration=frame_count * fps[1] / fps[0],
    )


def make_packet(maintainer, annotator_a, annotator_b, adjudicator, *, kind: str = "action-ledger", video=None, **extra):
    ensure_builtin_rows()
    return do_create_packet(
        actor=maintainer,
        title=extra.pop("title", f"{kind} packet"),
        video=video or make_ready_video(),
        task_kind=TaskKind.objects.get(slug=kind),
        annotator_a=annotator_a,
        annotator_b=annotator_b,
        adjudicator=adjudicator,
        instructions=extra.pop("instructions", "Label every action."),
        **extra,
    )


def client_for(user) -> APIClient:
    """A client signed in through a real session, for API and page views alike."""
    client = APIClient()
    if user is not None:
        client.force_login(user)
    return client


def body_of(response) -> bytes:
    """A response's body, whether whole or streamed (the leaderboard downloads)."""
    return b"".join(response) if response.streaming else response.content


def without_digests_and_times(text: str) -> str:
    """``text`` without hex digests and ISO times, which may hold any run of digits: what is
    left is where a leaked number would show."""
    return re.sub(r"[0-9a-f]{32,}|\d{4}-\d\d-\d\dT[\d:.+]+", "", text)
