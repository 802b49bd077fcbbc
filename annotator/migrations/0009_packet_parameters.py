"""Packet.params is named ``parameters`` (per-packet settings of the task kind, checked by
the family's adapter). A rename only: packet hashes are unchanged (the hashed content
keeps the key ``params``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("annotator", "0008_media_remux")]

    operations = [migrations.RenameField(model_name="packet", old_name="params", new_name="parameters")]
