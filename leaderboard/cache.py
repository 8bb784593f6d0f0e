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
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connections

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


# Stale-while-revalidate. When the generation moves (a run finished, a run was withdrawn), every page
# key misses at once. Each page is also kept under a key without the generation ("the latest copy"):
# a visitor who misses gets that copy at once, and the first of them (cache.add is atomic) has the
# page rebuilt, off the request on this process's revalidation thread (inline where
# PUBLIC_PAGE_REVALIDATE_INLINE is set: the test suite, whose database rows only its own connection
# sees). Only a page that has no copy at all (never built since the cache was emptied) is built by
# the request that asks for it.
REBUILD_LOCK_SECONDS = 60


@dataclass(frozen=True)
class Served(Generic[T]):
    """A page (or any value) as get_or_rebuild serves it: `fresh` when built for the current generation,
    not when it is the latest copy served while a rebuild runs (never to be stored as the current one)."""

    value: T
    fresh: bool


# One thread a process rebuilds stale pages in turn: a moved generation asks for many pages at once,
# and a web worker's requests must keep the CPU.
_revalidation = ThreadPoolExecutor(max_workers=1, thread_name_prefix="page-revalidation")
_pending: set[Future] = set()
_pending_lock = threading.Lock()


def get_or_rebuild(key: str, latest_key: str, build: Callable[[], T], timeout: int | None) -> Served[T]:
    """The value under `key`; else its latest copy (stale) while one rebuild runs; else a build by this request."""
    if timeout == 0:
        # Caching switched off: every request builds, and nothing stale is ever served.
        return Served(build(), fresh=True)
    value = cache.get(key)
    if value is not None:
        return Served(value, fresh=True)
    lock = f"{latest_key}:rebuilding"
    stale = cache.get(latest_key)
    if stale is not None:
        if cache.add(lock, 1, timeout=REBUILD_LOCK_SECONDS):
            if settings.PUBLIC_PAGE_REVALIDATE_INLINE:
                return Served(_rebuild(key, latest_key, build, timeout, lock), fresh=True)
            _revalidate_in_background(key, latest_key, build, timeout, lock)
        return Served(stale, fresh=False)
    # No copy to serve (the page was never built, or its copy was evicted): this request builds it,
    # and releases the lock only if it took it (a rebuild elsewhere keeps its own).
    taken = cache.add(lock, 1, timeout=REBUILD_LOCK_SECONDS)
    return Served(_rebuild(key, latest_key, build, timeout, lock if taken else None), fresh=True)


def _rebuild(key: str, latest_key: str, build: Callable[[], T], timeout: int | None, lock: str | None) -> T:
    try:
        value = build()
        store_rebuilt(key, latest_key, value, timeout)
    finally:
        if lock is not None:
            cache.delete(lock)
    return value


def _revalidate_in_background(
    key: str, latest_key: str, build: Callable[[], T], timeout: int | None, lock: str
) -> None:
    def run() -> None:
        try:
            _rebuild(key, latest_key, build, timeout, lock)
        except Exception:
            # The lock is gone (finally above): the next visitor of the stale page asks again.
            logger.exception("Rebuilding %s in the background failed", key)
        finally:
            # The thread's own database connections, which no request closes.
            connections.close_all()

    future = _revalidation.submit(run)
    with _pending_lock:
        _pending.add(future)
    future.add_done_callback(_forget)


def _forget(future: Future) -> None:
    with _pending_lock:
        _pending.discard(future)


def wait_for_revalidations(timeout: float) -> bool:
    """Wait until this process's background rebuilds are done; whether they all finished in time.

    For tests. A stopping web process needs no call: Python joins the executor's thread at exit, so a
    rebuild under way is finished (within gunicorn's graceful_timeout) and its page stored."""
    with _pending_lock:
        pending = set(_pending)
    _, unfinished = wait(pending, timeout=timeout)
    return not unfinished


def store_rebuilt(key: str, latest_key: str, value: object, timeout: int | None) -> None:
    """Store a built page under its key and as its latest copy."""
    cache.set(key, value, timeout)
    # The latest copy outlives the generation: it is only ever served while a rebuild is running.
    cache.set(latest_key, value, None)


def latest_of(key: str) -> str:
    """The latest-copy key of a generation key (the same parts, whatever the generation)."""
    head, generation, suffix = key.split(":", 3)[1:] if key.count(":") >= 3 else ("", "", "")
    if not generation.startswith("g") or not generation[1:].isdigit():
        raise ValueError(f"not a generation key: {key!r}")
    return f"leaderboard:{head}:latest:{suffix}"


def latest_key(*parts: object) -> str:
    """The key of a page's latest copy, whatever the generation (see get_or_rebuild)."""
    # Scoped to this database like every other key: a stale copy is still another database's page.
    return f"leaderboard:{site_identity()}:latest:{_suffix(parts)}"
