from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0015_resumable_uploads"),
    ]

    operations = [
        migrations.AlterField(
            model_name="resumableupload",
            name="kind",
            field=models.CharField(
                choices=[("video", "video"), ("bundle", "bundle"), ("submission", "submission")],
                default="video",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="resumableupload",
            name="consumed_at",
            field=models.DateTimeField(blank=True, help_text="when a route took the finished file", null=True),
        ),
    ]
