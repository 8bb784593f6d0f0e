from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard"

    def ready(self) -> None:
        from evaluation.signals import results_changed

        # One write invalidates every cached public page when runs, datasets or judgements change; for a
        # change of runs the most visited pages are built for the new generation before it moves.
        results_changed.connect(_refresh_on_results_changed, dispatch_uid="leaderboard.bump_on_results_changed")

        from django.db.models.signals import post_delete, post_save

        from leaderboard.cache import forget_site_identity
        from leaderboard.models import SiteIdentity

        # A changed identity takes effect at once in this process (other processes read it at start).
        for signal in (post_save, post_delete):
            signal.connect(forget_site_identity, sender=SiteIdentity, dispatch_uid=f"leaderboard.identity.{signal}")


def _refresh_on_results_changed(sender: type, **identifiers: object) -> None:
    from leaderboard.refresh import refresh_pages

    # The signal's own `signal` argument is no identifier of the change.
    identifiers.pop("signal", None)
    refresh_pages(sender, identifiers)
