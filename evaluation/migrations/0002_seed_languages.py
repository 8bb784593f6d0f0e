from django.db import migrations


def seed_languages(apps, schema_editor):
    from evaluation.engine.languages import LANGUAGES

    Language = apps.get_model("evaluation", "Language")
    for info in LANGUAGES:
        Language.objects.update_or_create(
            code=info.code,
            defaults={
                "name": info.name,
                "script": info.script,
                "script_name": info.script_name,
                "family": info.family,
                "rtl": info.rtl,
                "is_source": info.is_source,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_initial")]
    operations = [migrations.RunPython(seed_languages, migrations.RunPython.noop)]
