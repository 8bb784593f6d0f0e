from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard"

    def ready(self) -> None:
        from evaluation.signals import results_changed

        # One write invalidates every cached public page when runs, datasets or judgements change.
        results_changed.connect(_bump_on_results_changed, dispatch_uid="leaderboard.bump_on_results_changed")


def _bump_on_results_changed(sender: type, **identifiers: object) -> None:
    from leaderboard.cache import bump_generation

    bump_generation()
