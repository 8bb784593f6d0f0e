from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from evaluation.models import Run
    from leaderboard.standing import Standing


class LeaderboardConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard"

    def ready(self) -> None:
        from evaluation.hooks import register_run_standing
        from evaluation.signals import results_changed

        # The run page (evaluation/) shows the run's place on the board without importing the leaderboard.
        register_run_standing(_run_standing)

        # One write invalidates every cached public page when runs, datasets or judgements change; for a
        # change of runs the most visited pages are built for the new generation before it moves.
        results_changed.connect(_refresh_on_results_changed, dispatch_uid="leaderboard.bump_on_results_changed")

        from django.db.models.signals import post_delete, post_save

        from leaderboard.cache import forget_site_identity
        from leaderboard.models import SiteIdentity

        # A changed identity takes effect at once in this process (other processes read it at start).
        for signal in (post_save, post_delete):
            signal.connect(forget_site_identity, sender=SiteIdentity, dispatch_uid=f"leaderboard.identity.{signal}")


def _run_standing(run: Run) -> Standing | None:
    # Imported when a run page first asks, so that starting the site loads none of the board's pages.
    from leaderboard.standing import run_standing

    return run_standing(run)


def _refresh_on_results_changed(sender: type, **identifiers: object) -> None:
    from leaderboard.refresh import refresh_pages

    # The signal's own `signal` argument is no identifier of the change.
    identifiers.pop("signal", None)
    refresh_pages(sender, identifiers)
