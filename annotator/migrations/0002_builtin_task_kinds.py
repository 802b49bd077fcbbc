from django.db import migrations

# A snapshot: later edits to annotator.builtin_kinds need a new data migration.
from annotator.builtin_kinds import install_builtin_rows


def create_builtin_kinds(apps, schema_editor):
    install_builtin_rows(apps.get_model("annotator", "TaskKind"), apps.get_model("auth", "Group"))


class Migration(migrations.Migration):
    dependencies = [("annotator", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_builtin_kinds, migrations.RunPython.noop)]
