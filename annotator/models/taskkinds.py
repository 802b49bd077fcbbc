from django.db import models

from annotator.models.checked import CheckedModel


class TaskKind(CheckedModel):
    """A declarative event schema plus the scorer that grades ledgers of this kind.

    ``schema`` is validated by ``annotator.models.taskkind_schema.check_schema``; its shape is
    documented there. The three seed kinds are created by a data migration.
    """

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    scorer_id = models.CharField(max_length=100)
    schema = models.JSONField()
    builtin = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug
