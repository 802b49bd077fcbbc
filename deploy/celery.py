"""The Celery application. Start a worker with ``celery -A deploy worker``."""

import os
import time

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")

app = Celery("frameledger")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["annotator"])


# Task run times for /metrics (deploy/metrics.py; shared through PROMETHEUS_MULTIPROC_DIR).
_started: dict[str, float] = {}


@signals.task_prerun.connect
def _task_started(task_id=None, **_):
    _started[task_id] = time.perf_counter()


@signals.task_postrun.connect
def _task_finished(task_id=None, task=None, state=None, **_):
    started = _started.pop(task_id, None)
    if started is None or task is None:
        return
    try:
        from deploy.metrics import TASK_SECONDS

        TASK_SECONDS.labels(task.name, str(state or "UNKNOWN").lower()).observe(time.perf_counter() - started)
    except Exception:  # noqa: BLE001 - metrics never fail a task
        pass
