"""Prometheus metrics (``GET /metrics``), in multi-process mode under gunicorn.

- ``frameledger_http_request_duration_seconds{method,route,status}``: a histogram of the time
  Django spends on each request, labelled by the URL pattern (``route``: the pattern, never
  the raw path, so the label set stays bounded; ``unmatched`` for a 404 outside every route).
- ``frameledger_task_duration_seconds{task,outcome}``: a histogram of Celery task run times
  (recorded by the workers through ``deploy/celery.py``'s signals).
- ``frameledger_queue_depth{queue}``: messages waiting in each Celery queue, read from the
  Redis broker at scrape time.
- ``frameledger_jobs{kind,status}``: Job rows by kind and status, read at scrape time.

Multi-process mode: when ``PROMETHEUS_MULTIPROC_DIR`` is set (``deploy/gunicorn.conf.py``
and ``bin/run-stack`` set it) every process — each web worker and each Celery worker on the
machine — writes its samples to files there and ``/metrics`` adds them up. Without it the
metrics are this process's own.
"""

from __future__ import annotations

import logging
import os
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

logger = logging.getLogger(__name__)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
REQUEST_SECONDS = Histogram(
    "frameledger_http_request_duration_seconds",
    "Time Django spent answering a request, by route",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
TASK_SECONDS = Histogram(
    "frameledger_task_duration_seconds",
    "Celery task run time",
    ["task", "outcome"],
    buckets=(0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600),
)


def route_of(request) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "unmatched"
    return "/" + str(match.route)


class RequestMetricsMiddleware:
    """Times every request (first in ``MIDDLEWARE``). Synchronous, like the rest of the
    chain, so that it adds no thread switch under ASGI."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        REQUEST_SECONDS.labels(request.method, route_of(request), str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response


def celery_queues() -> list[str]:
    from django.conf import settings

    names = [
        settings.CELERY_TASK_DEFAULT_QUEUE,
        settings.FRAMELEDGER_INGEST_QUEUE,
        settings.FRAMELEDGER_SCORING_QUEUE,
        settings.FRAMELEDGER_RETRIEVAL_QUEUE,
        settings.FRAMELEDGER_BUNDLE_QUEUE,
        settings.FRAMELEDGER_BUNDLE_GPU_QUEUE,
    ]
    return sorted({name for name in names if name})


class ScrapeTimeCollector:
    """Queue depths (Redis broker) and Job counts, read when ``/metrics`` is scraped."""

    def collect(self):
        from django.conf import settings

        depth = GaugeMetricFamily("frameledger_queue_depth", "Messages waiting in a Celery queue", labels=["queue"])
        broker = settings.CELERY_BROKER_URL
        if broker.startswith(("redis://", "rediss://")):
            try:
                import redis

                client = redis.Redis.from_url(broker, socket_connect_timeout=1, socket_timeout=1)
                for queue in celery_queues():
                    # kombu keeps priority levels in sibling lists ("<queue>\x06\x16<n>")
                    keys = [queue] + [f"{queue}\x06\x16{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9)]
                    pipe = client.pipeline()
                    for key in keys:
                        pipe.llen(key)
                    depth.add_metric([queue], sum(pipe.execute()))
            except Exception as exc:  # noqa: BLE001 - a scrape reports what it can
                logger.warning("queue depth unavailable: %s", exc)
        yield depth
        jobs = GaugeMetricFamily("frameledger_jobs", "Job rows by kind and status", labels=["kind", "status"])
        try:
            from django.db.models import Count

            from annotator.models import Job

            for row in Job.objects.values("kind", "status").annotate(n=Count("id")).order_by():
                jobs.add_metric([row["kind"], row["status"]], row["n"])
        except Exception as exc:  # noqa: BLE001
            logger.warning("job counts unavailable: %s", exc)
        yield jobs


def render() -> tuple[bytes, str]:
    """The exposition text for every process of this machine (multi-process mode) or this one."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)
    else:
        from prometheus_client import REGISTRY

        registry = REGISTRY
        if not getattr(render, "_registered", False):
            registry.register(ScrapeTimeCollector())
            render._registered = True
        return generate_latest(registry), CONTENT_TYPE_LATEST
    registry.register(ScrapeTimeCollector())
    return generate_latest(registry), CONTENT_TYPE_LATEST
