from django.db import migrations

# A snapshot: later edits to annotator.builtin_kinds need a new data migration.
from annotator.builtin_kinds import BUILTIN_KINDS


def create_builtin_kinds(apps, schema_editor):
    TaskKind = apps.get_model("annotator", "TaskKind")
    Group = apps.get_model("auth", "Group")
    for kind in BUILTIN_KINDS:
        TaskKind.objects.update_or_create(slug=kind["slug"], defaults={**kind, "builtin": True})
    Group.objects.get_or_create(name="maintainers")


class Migration(migrations.Migration):
    dependencies = [("annotator", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_builtin_kinds, migrations.RunPython.noop)]
