from django.conf import settings
from django.db import models

from annotator.models.checked import CheckedModel


class Project(CheckedModel):
    """Packets of one task kind made and assigned together (``annotator.actions.projects``).

    ``parameters`` are checked against the kind's family (``FamilyAdapter.check_project_parameters``) and
    copied into every packet the project makes, where they become part of the packet's
    hash. ``annotators`` and ``adjudicators`` are the pools the assignment rule draws
    from; ``next_slot`` is where the round robin goes on at the next batch, so several
    uploads in a row spread the work as one batch would.
    """

    class Assignment(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin (A, B and adjudicator distinct per packet)"

    title = models.CharField(max_length=300, unique=True)
    task_kind = models.ForeignKey("annotator.TaskKind", on_delete=models.PROTECT, related_name="projects")
    instructions = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    assignment = models.CharField(max_length=30, choices=Assignment.choices, default=Assignment.ROUND_ROBIN)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)
    adjudicators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", blank=True)
    next_slot = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title
