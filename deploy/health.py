"""Health endpoints for the proxy, the orchestrator and Prometheus.

- ``GET /healthz``: 200 while the process answers (liveness; touches nothing else).
- ``GET /readyz``: 200 when the database, the Celery broker and the channel layer all answer
  within ``READY_TIMEOUT`` seconds, 503 otherwise; the JSON body says which failed. With
  ``FRAMELEDGER_INSTANCE`` set (``deploy/stack.py`` sets a fresh token per start), the answer
  carries it in ``X-FrameLedger-Instance``.
- ``GET /metrics``: Prometheus text (``deploy/metrics.py``), for ``FRAMELEDGER_METRICS_ALLOW`` only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import time

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection
from django.http import Http404, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

READY_TIMEOUT = 2.0
INSTANCE_HEADER = "X-FrameLedger-Instance"


@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def check_broker() -> None:
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=READY_TIMEOUT, socket_timeout=READY_TIMEOUT).ping()
        return
    from kombu import Connection

    with Connection(url, connect_timeout=READY_TIMEOUT) as conn:
        conn.ensure_connection(max_retries=1, timeout=READY_TIMEOUT)


def check_channel_layer() -> None:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")

    async def probe():
        # A message to a group nobody is in: one round trip to the layer's store, nothing kept.
        await asyncio.wait_for(layer.group_send("readyz-probe", {"type": "readyz.probe"}), READY_TIMEOUT)

    async_to_sync(probe)()


CHECKS = {"database": check_database, "broker": check_broker, "channel_layer": check_channel_layer}


@never_cache
@require_GET
def readyz(request):
    results, ready = {}, True
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            check()
            results[name] = {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            ready = False
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
            if name == "database":
                connection.close_if_unusable_or_obsolete()
    response = JsonResponse({"ready": ready, "checks": results}, status=200 if ready else 503)
    instance = os.environ.get("FRAMELEDGER_INSTANCE", "")
    if instance:  # the token bin/run-stack gave this start: its wait for "up" checks the answer is ours
        response[INSTANCE_HEADER] = instance
    return response


def metrics_allowed(address: str | None) -> bool:
    """Whether ``address`` is in ``FRAMELEDGER_METRICS_ALLOW`` (addresses or networks)."""
    try:
        ip = ipaddress.ip_address((address or "").strip())
    except ValueError:
        return False
    for entry in settings.FRAMELEDGER_METRICS_ALLOW:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


@never_cache
@require_GET
def metrics(request):
    """Only for ``FRAMELEDGER_METRICS_ALLOW`` (the client address as the web server sees it,
    forwarded by nginx): anyone else gets the same 404 as an unknown path."""
    from deploy.metrics import render

    if not metrics_allowed(request.META.get("REMOTE_ADDR")):
        raise Http404("Not found")

    body, content_type = render()
    return HttpResponse(body, content_type=content_type)
