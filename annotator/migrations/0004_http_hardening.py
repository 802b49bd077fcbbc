"""Hashed, expiring API tokens replace rest_framework.authtoken's plain ones.

Tokens already issued by rest_framework.authtoken (its table ``authtoken_token``, when
the database has it) keep working: each is stored as its SHA-256, expiring
FRAMELEDGER_TOKEN_TTL_SECONDS after this migration, and the plain row is deleted.
Self-contained: no application code is imported.
"""

import datetime
import hashlib
from datetime import timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def hash_plain_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if "authtoken_token" not in connection.introspection.table_names():
        return
    from django.utils import timezone
    from django.utils.dateparse import parse_datetime

    ApiToken = apps.get_model("annotator", "ApiToken")
    now = timezone.now()
    expires = now + timedelta(seconds=getattr(settings, "FRAMELEDGER_TOKEN_TTL_SECONDS", 30 * 24 * 3600))
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, user_id, created FROM authtoken_token")
        rows = cursor.fetchall()
        for key, user_id, created in rows:
            if isinstance(created, str):  # SQLite hands back text
                created = parse_datetime(created)
            if created is not None and timezone.is_naive(created):
                created = timezone.make_aware(created, datetime.UTC)
            ApiToken.objects.create(
                user_id=user_id,
                digest=hashlib.sha256(key.encode()).hexdigest(),
                prefix=key[:8],
                created_at=created or now,
                expires_at=expires,
            )
        cursor.execute("DELETE FROM authtoken_token")


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0003_grading'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('digest', models.CharField(max_length=64, unique=True)),
                ('prefix', models.CharField(help_text='the first characters, to tell tokens apart', max_length=8)),
                ('created_at', models.DateTimeField()),
                ('expires_at', models.DateTimeField(db_index=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.RunPython(hash_plain_tokens, migrations.RunPython.noop),
    ]
