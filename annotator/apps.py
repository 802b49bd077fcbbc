from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "FrameLedger workflow"

    def ready(self) -> None:
        from annotator.entry import (  # noqa: F401
            security_checks,  # registers the security system checks
            system_checks,  # registers the system checks
            tasks,  # registers the Celery tasks, which actions enqueue by name
        )
