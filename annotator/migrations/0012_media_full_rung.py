from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0011_video_search_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="video",
            name="full",
            field=models.FileField(blank=True, upload_to="videos/full/"),
        ),
        migrations.AddField(
            model_name="video",
            name="full_sha256",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
