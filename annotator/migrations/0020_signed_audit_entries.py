"""Audit entries carry an Ed25519 signature over their SHA-256 and the id of the key that made it
(``annotator.base.signing``). Both columns are nullable so that SQLite adds them with ALTER
TABLE (no table rebuild: the audit table's triggers stay); entries appended before signing
began have none, and the keyring's ``unsigned_through`` says up to which seq that is allowed.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0019_sealed_bundle_runs"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditentry",
            name="key_id",
            field=models.CharField(max_length=16, null=True),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="signature",
            field=models.CharField(max_length=128, null=True),
        ),
    ]
