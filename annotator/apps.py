from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "FrameLedger workflow"

    def ready(self) -> None:
        from annotator import checks, security_checks  # noqa: F401  (registers the system checks)
