"""The Celery application. Start a worker with ``celery -A deploy worker``."""

import logging
import os
import time

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")

app = Celery("frameledger")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["annotator.entry"])


# With LOG_FILE (bin/run-demo), the worker keeps Django's LOGGING (deploy/logs.py: the file gets
# every record, the console what LOG_CONSOLE_* let through) instead of Celery's own handlers: a
# receiver of setup_logging tells Celery to leave logging alone.
if os.environ.get("LOG_FILE", "").strip():

    @signals.setup_logging.connect
    def _keep_django_logging(**_):
        pass


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


# A worker machine of its own (no gunicorn beside it): the metrics folder may not exist, and no
# web process there adds its samples up. The folder is made here (never emptied: other workers
# of the machine may be writing to it), and with FRAMELEDGER_WORKER_METRICS_BIND=ADDR:PORT the
# worker's main process serves the machine's samples for Prometheus to scrape (docs/deploy.md).
@signals.worker_init.connect
def _worker_metrics(**_):
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    bind = os.environ.get("FRAMELEDGER_WORKER_METRICS_BIND", "").strip()
    if bind:
        from prometheus_client import CollectorRegistry, multiprocess, start_http_server

        address, _, port = bind.rpartition(":")
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=folder)
        try:
            start_http_server(int(port), addr=address or "127.0.0.1", registry=registry)
        except OSError as exc:  # another worker of this machine serves them already
            logging.getLogger(__name__).warning("worker metrics not served on %s: %s", bind, exc)
