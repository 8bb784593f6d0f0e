"""`last_updated` for the footer of every page: when the data a visitor sees last changed."""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache
from django.db.models import Max
from django.db.models.functions import Coalesce
from django.urls import NoReverseMatch, reverse
from django.utils.functional import SimpleLazyObject

from annotation.models import Rating
from evaluation.models import Dataset, Run
from leaderboard.cache import generation_key
from leaderboard.responses import canonical_query


def latest_change() -> datetime | None:
    """The newest finished run, imported benchmark version or submitted rating (three indexed aggregates)."""
    moments = [
        Run.objects.finished().aggregate(at=Max(Coalesce("finished_at", "created_at")))["at"],
        Dataset.objects.aggregate(at=Max("created_at"))["at"],
        Rating.objects.aggregate(at=Max("submitted_at"))["at"],
    ]
    present = [moment for moment in moments if moment is not None]
    return max(present) if present else None


# New scores bump the cache generation, so they show at once; a new rating shows within this time.
LAST_UPDATED_SECONDS = 60


def cached_latest_change() -> datetime | None:
    key = generation_key("last-updated")
    stamp = cache.get(key)
    if stamp is None:
        moment = latest_change()
        stamp = moment.isoformat() if moment else ""
        cache.set(key, stamp, LAST_UPDATED_SECONDS)
    return datetime.fromisoformat(stamp) if stamp else None


def last_updated(request) -> dict:
    # Lazy, so that a page whose footer is served from the cache costs nothing at all.
    return {"last_updated": SimpleLazyObject(cached_latest_change)}


def _return_path(request) -> str:
    """Where the log-in and sign-up links bring a visitor back to: the canonical page, never the raw URL.

    A public page is cached as a whole for anonymous visitors under its cleaned query
    (leaderboard.responses.canonical_query); the link is built from that same cleaned query and the
    path the URL configuration gives for the view, so one visitor's tracking parameters, e-mail address
    or padding never reach the next visitor's copy of the page.
    """
    match = getattr(request, "resolver_match", None)
    if match is None:
        return reverse("leaderboard:overview")
    try:
        path = reverse(match.view_name, args=match.args, kwargs=match.kwargs)
    except NoReverseMatch:
        return reverse("leaderboard:overview")
    query = canonical_query(request)
    return f"{path}?{query}" if query else path


def return_path(request) -> dict:
    return {"return_path": SimpleLazyObject(lambda: _return_path(request))}
