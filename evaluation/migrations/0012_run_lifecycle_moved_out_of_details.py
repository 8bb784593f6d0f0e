"""Move the worker's and the submission's blocks out of Run.details into their own field, Run.lifecycle.

run.details is then the engine's results only; "submission", "preflight", "attempts", "batch_size"
and "preflight_tries" keep their JSON shape in Run.lifecycle (evaluation.lifecycle.RunLifecycle).
Reversible: going back moves the blocks into details again.
"""

from django.db import migrations, models

LIFECYCLE_KEYS = ("submission", "preflight", "attempts", "batch_size", "preflight_tries")


def move_out_of_details(apps, schema_editor):
    Run = apps.get_model("evaluation", "Run")
    for run in Run.objects.only("pk", "details", "lifecycle").iterator():
        details = dict(run.details or {})
        moved = {key: details.pop(key) for key in LIFECYCLE_KEYS if key in details}
        if moved:
            Run.objects.filter(pk=run.pk).update(details=details, lifecycle={**(run.lifecycle or {}), **moved})


def move_back_into_details(apps, schema_editor):
    Run = apps.get_model("evaluation", "Run")
    for run in Run.objects.only("pk", "details", "lifecycle").iterator():
        if run.lifecycle:
            Run.objects.filter(pk=run.pk).update(details={**(run.details or {}), **run.lifecycle}, lifecycle={})


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0011_run_withdrawn_and_notify")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="lifecycle",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Submission, pre-flight checks and worker attempts (RunLifecycle).",
            ),
        ),
        migrations.RunPython(move_out_of_details, move_back_into_details),
    ]
