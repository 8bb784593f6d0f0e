from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluation"

    def ready(self) -> None:
        from evaluation import notifications, outbox
        from evaluation.signals import outbox_sweep_due, run_over, run_queued

        run_over.connect(notifications.send_run_over_email, dispatch_uid="evaluation-run-over-email")
        run_queued.connect(outbox.on_run_queued, dispatch_uid="evaluation-outbox-run-queued")
        outbox_sweep_due.connect(outbox.on_sweep_due, dispatch_uid="evaluation-outbox-sweep")
