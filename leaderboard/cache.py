"""Public pages are cached under a generation number; one bump invalidates all of them at once.

A finished run or an import sends `evaluation.signals.results_changed`, to which this app subscribes
(leaderboard/apps.py) with `bump_generation()`; cached pages carry the
generation in their key, so stale entries are simply never read again and expire on their own.
"""

from __future__ import annotations

from django.core.cache import cache

GENERATION_KEY = "leaderboard:generation"


def current_generation() -> int:
    generation = cache.get(GENERATION_KEY)
    if generation is None:
        # add() is atomic, so concurrent first readers agree on the starting value.
        cache.add(GENERATION_KEY, 1, timeout=None)
        generation = cache.get(GENERATION_KEY, 1)
    return int(generation)


def bump_generation() -> int:
    try:
        return int(cache.incr(GENERATION_KEY))
    except ValueError:
        cache.set(GENERATION_KEY, 2, timeout=None)
        return 2


def generation_key(*parts: object) -> str:
    """A cache key for a public page or fragment, scoped to the current generation."""
    suffix = ":".join(str(part) for part in parts)
    return f"leaderboard:g{current_generation()}:{suffix}"
