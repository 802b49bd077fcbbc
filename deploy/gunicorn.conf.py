"""gunicorn with uvicorn workers: the production web server (docs/deploy.md, "Topology").

    gunicorn -c deploy/gunicorn.conf.py deploy.asgi:application

Why: gunicorn's master forks ``WEB_CONCURRENCY`` worker processes (Daphne is one process, so
one CPU), restarts a worker that dies, and reloads gracefully (``kill -HUP <master>``: new
workers start, old ones finish their requests). Each worker is uvicorn (ASGI: HTTP and the
websockets of Channels), which streams request bodies to the application, so
``deploy.body_limits.BodyLimitMiddleware`` (the outermost layer of ``deploy.asgi``) refuses an
oversized body before it is read.

Every setting comes from the environment:

=============================  ===========================================  =================
``FRAMELEDGER_BIND``           address(es), comma-separated                 ``127.0.0.1:8000``
``WEB_CONCURRENCY``            worker processes                             CPUs (at least 2)
``GUNICORN_TIMEOUT``           seconds a silent worker lives                ``60``
``GUNICORN_GRACEFUL_TIMEOUT``  seconds to finish requests on stop/reload    ``30``
``FORWARDED_ALLOW_IPS``        proxies trusted for X-Forwarded-*            ``127.0.0.1``
``PROMETHEUS_MULTIPROC_DIR``   metrics folder shared by the processes       ``var/metrics``
=============================  ===========================================  =================
"""

import os
import shutil
from pathlib import Path

_root = Path(__file__).resolve().parent.parent

bind = [b.strip() for b in os.environ.get("FRAMELEDGER_BIND", "127.0.0.1:8000").split(",") if b.strip()]
workers = int(os.environ.get("WEB_CONCURRENCY") or max(2, os.cpu_count() or 1))
worker_class = "uvicorn_worker.UvicornWorker"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = 20
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
proxy_allow_ips = forwarded_allow_ips
# Logs: gunicorn's own lines on stderr; Django's JSON lines (deploy/logs.py) beside them.
# The access log is nginx's (one per request is enough).
accesslog = None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
proc_name = "frameledger-web"
# gunicorn's control socket (gunicornc) lives in the home folder by default, which two
# stacks on one machine would share: give it a path (GUNICORN_CONTROL_SOCKET) or none.
if os.environ.get("GUNICORN_CONTROL_SOCKET"):
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
else:
    control_socket_disable = True

# Prometheus multi-process mode: every worker writes its samples under this folder and
# /metrics adds them up. It must be set before prometheus_client is imported anywhere.
_metrics_dir = os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(_root / "var" / "metrics"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")


def on_starting(server):
    """In the master, before any worker: an empty metrics folder, then Django's system
    checks (a weak secret key or a bad setting stops the start, as with ``deploy.serve``)."""
    if os.environ.get("FRAMELEDGER_KEEP_METRICS") != "1":
        shutil.rmtree(_metrics_dir, ignore_errors=True)
    os.makedirs(_metrics_dir, exist_ok=True)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("check", fail_level="ERROR")


def post_fork(server, worker):
    """In each web worker, at once: SIGTERM when the master exits, however it ends (a master
    killed with SIGKILL would otherwise leave its workers listening on the port;
    ``deploy/pdeathsig.py``)."""
    from deploy.pdeathsig import die_with_parent

    die_with_parent(parent=server.pid)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
