"""Public pages are cached under a generation number; one bump invalidates all of them at once.

A finished run or an import sends `evaluation.signals.results_changed`, to which this app subscribes
(leaderboard/apps.py) with `bump_generation()`; cached pages carry the
generation in their key, so stale entries are simply never read again and expire on their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache

T = TypeVar("T")

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


# Stale-while-revalidate. When the generation moves (a run finished), every page key misses at once
# and every visitor would wait for a rebuild (seconds with 200 models). Instead each page is also kept
# under a key without the generation ("the latest copy"); of the visitors who miss, the one who takes
# the rebuild lock (cache.add is atomic) rebuilds, and the others are served the latest copy meanwhile.
REBUILD_LOCK_SECONDS = 60


def get_or_rebuild(key: str, latest_key: str, build: Callable[[], T], timeout: int | None) -> T:
    """The value under `key`, else a fresh build (stored under both keys), else while another request
    rebuilds it, the latest copy under `latest_key`; with neither, this request builds too."""
    if timeout == 0:
        # Caching switched off: every request builds, and nothing stale is ever served.
        return build()
    value = cache.get(key)
    if value is not None:
        return value
    lock = f"{latest_key}:rebuilding"
    if not cache.add(lock, 1, timeout=REBUILD_LOCK_SECONDS):
        stale = cache.get(latest_key)
        if stale is not None:
            return stale
    try:
        value = build()
        cache.set(key, value, timeout)
        # The latest copy outlives the generation: it is only ever served while a rebuild is running.
        cache.set(latest_key, value, None)
    finally:
        cache.delete(lock)
    return value


def latest_key(*parts: object) -> str:
    """The key of a page's latest copy, whatever the generation (see get_or_rebuild)."""
    return "leaderboard:latest:" + ":".join(str(part) for part in parts)
