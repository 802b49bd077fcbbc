"""Settings and process entry points (web, worker) for FrameLedger."""

from deploy.celery import app as celery_app

__all__ = ["celery_app"]
