"""Personas shared by every suite (as healthchecks' Alice/Bob/Charlie):
``annotator_a``, ``annotator_b``, ``adjudicator``, ``maintainer``, ``outsider``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import kombu.pools
import pytest
from django.db import connection

from tests.factories import make_packet, make_user


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # The audit chain's anchor log (outside the media), one per test like the database's chain.
    settings.FRAMELEDGER_AUDIT_ANCHOR = str(tmp_path / "anchors" / "audit-anchors.log")


@pytest.fixture(autouse=True)
def _empty_cache():
    """Sign-in failure counts live in the cache (a per-process LocMemCache in tests)."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def annotator_a(db):
    return make_user("annotator_a")


@pytest.fixture
def annotator_b(db):
    return make_user("annotator_b")


@pytest.fixture
def adjudicator(db):
    return make_user("adjudicator")


@pytest.fixture
def maintainer(db):
    return make_user("maintainer", maintainer=True)


@pytest.fixture
def outsider(db):
    return make_user("outsider")


@pytest.fixture
def packet(maintainer, annotator_a, annotator_b, adjudicator):
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator)


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def fresh_producer_pools(app) -> None:
    """Forget every pooled broker connection and producer (kombu keeps a global registry
    keyed by connection): the next publish connects to the broker configured now."""
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def use_test_broker(settings, tmp_path, prefix: str) -> tuple[str, str]:
    """Point this process's Celery app at the test broker (the configured Redis when
    REDIS_URL is set, else a SQLite file under ``tmp_path``) and a queue of the test's
    own; returns ``(broker_url, queue_name)`` for the worker processes the test starts."""
    from deploy.celery import app

    broker = (
        os.environ.get("REDIS_URL") and settings.CELERY_BROKER_URL or f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
    )
    settings.CELERY_BROKER_URL = broker
    queue = f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
    app.conf.broker_url = broker
    app.conf.task_default_queue = queue
    fresh_producer_pools(app)
    if broker.startswith("sqla+"):
        # kombu's SQL transport creates its tables and a queue's row on first use, each as a
        # SELECT then an INSERT: two workers starting together on a new queue race, and the
        # loser dies of a UNIQUE violation. Made here, before any worker starts.
        with kombu.Connection(broker) as conn:
            conn.default_channel.queue_declare(queue=queue)
    return broker, queue


@pytest.fixture
def worker(tmp_path, settings):
    from deploy.celery import app

    broker, queue = use_test_broker(settings, tmp_path, "test")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker,
        "CELERY_QUEUE": queue,
        "FRAMELEDGER_MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "deploy", "worker", "--pool=solo", "-Q", queue, "--loglevel=INFO"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=settings.BASE_DIR,
    )
    yield process, tmp_path / "worker.log"
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()
    fresh_producer_pools(app)
    app.conf.broker_url = None
    app.conf.task_default_queue = settings.CELERY_TASK_DEFAULT_QUEUE
