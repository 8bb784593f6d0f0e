from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluation"

    def ready(self) -> None:
        from evaluation import notifications
        from evaluation.signals import run_over

        run_over.connect(notifications.send_run_over_email, dispatch_uid="evaluation-run-over-email")
