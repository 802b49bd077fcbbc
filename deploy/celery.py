"""The Celery application. Start a worker with ``celery -A deploy worker``."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")

app = Celery("frameledger")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["annotator"])
