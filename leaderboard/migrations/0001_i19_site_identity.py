import uuid

from django.db import migrations, models


def create_identity(apps, schema_editor) -> None:
    # Every database gets its own random identity when it is created, so no two share one.
    SiteIdentity = apps.get_model("leaderboard", "SiteIdentity")
    if not SiteIdentity.objects.exists():
        SiteIdentity.objects.create(key=uuid.uuid4())


class Migration(migrations.Migration):
    initial = True

    dependencies: list = []

    operations = [
        migrations.CreateModel(
            name="SiteIdentity",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"verbose_name_plural": "site identity"},
        ),
        migrations.RunPython(create_identity, migrations.RunPython.noop),
    ]
