"""Public pages are cached under a generation number; one bump invalidates all of them at once.

A finished run or an import sends `evaluation.signals.results_changed`, to which this app subscribes
(leaderboard/apps.py) with `bump_generation()`; cached pages carry the
generation in their key, so stale entries are simply never read again and expire on their own.
For a finished run the pages most visitors open are first built for the next generation
(`build_then_bump`, leaderboard/refresh.py), so that no visitor waits for them after the move.

Every key also carries the identity of the site's database (leaderboard.models.SiteIdentity): a cache
shared by mistake between two databases (two sites, or a site and a test run) never serves one
database's page to the other.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

from django.core.cache import cache
from django.db import DatabaseError

from leaderboard.models import SiteIdentity

T = TypeVar("T")

logger = logging.getLogger(__name__)

MAX_SUFFIX_LENGTH = 150

# The identity read once per process; a site's database keeps its identity for its whole life.
_identity: dict[str, str] = {}


def site_identity() -> str:
    """The short identity of this database, read from (or, when its row is missing, written to) the table."""
    if "key" not in _identity:
        try:
            row = SiteIdentity.objects.order_by("pk").first() or SiteIdentity.objects.create()
        except DatabaseError:
            # Before migrations (or with the table missing) there is nothing cached worth sharing;
            # a key that no other database can produce keeps the pages apart all the same.
            return "unmigrated"
        _identity["key"] = row.key.hex
    return _identity["key"]


def forget_site_identity(**_: object) -> None:
    """Read the identity again on next use (after it changed, or the tables were emptied by a test)."""
    _identity.clear()


def _generation_key() -> str:
    return f"leaderboard:{site_identity()}:generation"


# While pages are built for the next generation (build_then_bump), the keys they are stored under
# carry that generation; everywhere else this is None and keys carry the current one.
_building_generation: ContextVar[int | None] = ContextVar("building_generation", default=None)


def current_generation() -> int:
    building = _building_generation.get()
    if building is not None:
        return building
    key = _generation_key()
    generation = cache.get(key)
    if generation is None:
        # add() is atomic, so concurrent first readers agree on the starting value.
        cache.add(key, 1, timeout=None)
        generation = cache.get(key, 1)
    return int(generation)


def bump_generation() -> int:
    key = _generation_key()
    try:
        return int(cache.incr(key))
    except ValueError:
        cache.set(key, 2, timeout=None)
        return 2


def build_then_bump(build: Callable[[], object]) -> int:
    """Run `build` with every generation key naming the next generation, then move to it; the new one.

    What `build` stores is in place before the generation moves, so the first visitor after the move
    finds it. A failed build is logged and the generation moves all the same: the pages are then built
    by their first visitor (get_or_rebuild), never left stale. When another bump lands while `build`
    runs (two runs finishing together), this one moves one generation further, whose pages were not
    built here; their visitors get the latest copy while one of them rebuilds (get_or_rebuild).
    """
    token = _building_generation.set(current_generation() + 1)
    try:
        build()
    except Exception:
        logger.exception("Building the pages of the next cache generation failed; visitors will build them")
    finally:
        _building_generation.reset(token)
    return bump_generation()


def generation_key(*parts: object) -> str:
    """A cache key for a public page or fragment, scoped to this database and the current generation."""
    return f"leaderboard:{site_identity()}:g{current_generation()}:{_suffix(parts)}"


def _suffix(parts: tuple[object, ...]) -> str:
    suffix = ":".join(str(part) for part in parts)
    # A long query (free text, many values) is hashed: keys stay short enough for every cache backend.
    if len(suffix) > MAX_SUFFIX_LENGTH:
        suffix = f"sha256:{hashlib.sha256(suffix.encode('utf-8')).hexdigest()}"
    return suffix


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
        store_rebuilt(key, latest_key, value, timeout)
    finally:
        cache.delete(lock)
    return value


def store_rebuilt(key: str, latest_key: str, value: object, timeout: int | None) -> None:
    """Store a built page under its key and as its latest copy."""
    cache.set(key, value, timeout)
    # The latest copy outlives the generation: it is only ever served while a rebuild is running.
    cache.set(latest_key, value, None)


def latest_key(*parts: object) -> str:
    """The key of a page's latest copy, whatever the generation (see get_or_rebuild)."""
    # Scoped to this database like every other key: a stale copy is still another database's page.
    return f"leaderboard:{site_identity()}:latest:{_suffix(parts)}"
