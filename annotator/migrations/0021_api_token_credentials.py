"""API tokens remember the password they were issued under (``ApiToken.credential``).

Tokens issued before are given their owner's current credential, so they keep working until
the password changes. The digest is spelt out here (Django's ``salted_hmac`` with the key salt
``annotator.models.tokens.credential_of`` uses) instead of importing live code."""

from django.db import migrations, models
from django.utils.crypto import salted_hmac


def fill_credentials(apps, schema_editor):
    ApiToken = apps.get_model("annotator", "ApiToken")
    for token in ApiToken.objects.select_related("user"):
        token.credential = salted_hmac("frameledger.api-token", token.user.password, algorithm="sha256").hexdigest()
        token.save(update_fields=["credential"])


class Migration(migrations.Migration):
    dependencies = [("annotator", "0020_signed_audit_entries")]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="credential",
            field=models.CharField(
                default="",
                help_text="credential_of(user) when issued: a new password makes it stale",
                max_length=64,
            ),
        ),
        migrations.RunPython(fill_credentials, migrations.RunPython.noop),
    ]
