"""Celery tasks: thin wrappers that load rows and call the ``do_*`` operations."""

from annotator.bundle_tasks import *  # noqa: F401,F403
from annotator.grading_tasks import *  # noqa: F401,F403
from annotator.media.tasks import *  # noqa: F401,F403
