"""Celery tasks of grading: thin wrappers that call ``annotator.actions.grading``.

A scoring run is sent as a Celery group of ``score_batch`` tasks (one per chunk of
submissions). Each task scores its chunk and writes the run's progress to the
``Job`` row, so any web process can relay it whatever the channel layer; the task
that sees nothing pending finishes the run. A redelivered task (acks_late) skips the
scores already final.
"""

from __future__ import annotations

from celery import shared_task

__all__ = ["score_batch"]


@shared_task(name="annotator.score_batch")
def score_batch(run_id: int, result_ids: list[int]) -> int:
    from annotator.actions.grading import do_score_batch

    return do_score_batch(run_id, result_ids)
