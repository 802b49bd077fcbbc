"""Celery task of executable bundles: a thin wrapper around ``annotator.actions.bundles``.

Queued on ``FRAMELEDGER_BUNDLE_QUEUE`` (``FRAMELEDGER_BUNDLE_GPU_QUEUE`` for CUDA): start
workers for it with ``celery -A deploy worker -Q frameledger-bundles`` (``-Q gpu`` on a
CUDA machine), as root so that the sandbox can switch user and namespaces.
"""

from __future__ import annotations

from celery import shared_task

__all__ = ["run_bundle"]


@shared_task(name="annotator.run_bundle")
def run_bundle(run_id: int) -> str:
    from annotator.actions.bundles import do_run_bundle

    return do_run_bundle(run_id).status
