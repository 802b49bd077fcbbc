from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "FrameLedger workflow"

    def ready(self) -> None:
        from annotator import (  # noqa: F401  (registers the system checks)
            checks,
            security_checks,
            tasks,  # noqa: F401  (registers the Celery tasks, which actions enqueue by name)
        )
