"""Enqueueing Celery tasks by name, after the current transaction commits.

The write operations in ``annotator.actions`` call these instead of importing
``annotator.entry.tasks``: the task runs only once the rows it reads exist, and the write
layer stays free of the task layer (which imports it). A task is named by its
registered name (``SCORE_BATCH`` …, below). ``annotator.apps`` loads the task module
when Django starts, so a task runs inline where Celery is told to (``task_always_eager``);
a process without it still sends the task, by name, to the broker.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import transaction

# The registered names of the tasks in ``annotator.entry.tasks``.
INGEST_VIDEO = "annotator.ingest_video"
INGEST_PROXY = "annotator.ingest_proxy"
INGEST_CHUNK = "annotator.ingest_chunk"
INGEST_JOIN = "annotator.ingest_join"
INGEST_SWEEP = "annotator.ingest_sweep"
INGEST_FULL = "annotator.ingest_full"
SCORE_BATCH = "annotator.score_batch"
SCORING_SWEEP = "annotator.scoring_sweep"
RUN_BUNDLE = "annotator.run_bundle"
BUNDLE_SWEEP = "annotator.bundle_sweep"
BUILD_SEARCH_INDEX = "annotator.build_search_index"
RECOMPUTE_CALIBRATION = "annotator.recompute_calibration"
AGREEMENT_REPORT = "annotator.agreement_report"
VERSION_CALIBRATION = "annotator.version_calibration"
DERIVED_SWEEP = "annotator.derived_sweep"


def send(task_name: str, args: Sequence, **options) -> None:
    """Send one task to the broker now (``options``: Celery's, e.g. ``queue``)."""
    _signature(task_name, args).apply_async(**options)


def enqueue_on_commit(task_name: str, *args) -> None:
    """Send one task after commit (at once outside a transaction)."""
    transaction.on_commit(lambda: send(task_name, args))


def enqueue_each_on_commit(task_name: str, arg_lists: Iterable[Sequence]) -> None:
    """Send one ``task_name`` task per argument list, each on its own, after commit
    (one on-commit callback for them all)."""
    arg_lists = [tuple(args) for args in arg_lists]
    transaction.on_commit(lambda: [send(task_name, args) for args in arg_lists])


def enqueue_group_on_commit(task_name: str, arg_lists: Iterable[Sequence]) -> None:
    """Send one Celery group of ``task_name`` tasks, one per argument list, after commit."""
    arg_lists = [tuple(args) for args in arg_lists]

    def send() -> None:
        from celery import group

        group(_signature(task_name, args) for args in arg_lists).apply_async()

    transaction.on_commit(send)


def _signature(task_name: str, args: Sequence):
    from celery import current_app

    return current_app.signature(task_name, args=tuple(args), immutable=True)
