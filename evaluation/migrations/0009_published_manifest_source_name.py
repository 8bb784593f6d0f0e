"""Published runs recorded the absolute path of the folder they were imported from.

That path is a server detail shown on the public run page; keep only the folder's name.
"""

from pathlib import PurePosixPath

from django.db import migrations


def keep_folder_name(apps, schema_editor):
    Run = apps.get_model("evaluation", "Run")
    for run in Run.objects.filter(origin="published").only("pk", "manifest"):
        source = (run.manifest or {}).get("source")
        if isinstance(source, str) and "/" in source:
            run.manifest["source"] = PurePosixPath(source.rstrip("/")).name
            Run.objects.filter(pk=run.pk).update(manifest=run.manifest)


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0008_dataset_import_report")]

    operations = [migrations.RunPython(keep_folder_name, migrations.RunPython.noop)]
