"""Public pages are cached under a generation number; one bump invalidates all of them at once.

A finished run or an import sends `evaluation.signals.results_changed`, to which this app subscribes
(leaderboard/apps.py) with `bump_generation()`; cached pages carry the
generation in their key, so stale entries are simply never read again and expire on their own.

Every key also carries the identity of the site's database (leaderboard.models.SiteIdentity): a cache
shared by mistake between two databases (two sites, or a site and a test run) never serves one
database's page to the other.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.db import DatabaseError

MAX_SUFFIX_LENGTH = 150

# The identity read once per process; a site's database keeps its identity for its whole life.
_identity: dict[str, str] = {}


def site_identity() -> str:
    """The short identity of this database, read from (or, when its row is missing, written to) the table."""
    if "key" not in _identity:
        from leaderboard.models import SiteIdentity

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


def current_generation() -> int:
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


def generation_key(*parts: object) -> str:
    """A cache key for a public page or fragment, scoped to this database and the current generation."""
    suffix = ":".join(str(part) for part in parts)
    # A long query (free text, many values) is hashed: keys stay short enough for every cache backend.
    if len(suffix) > MAX_SUFFIX_LENGTH:
        suffix = f"sha256:{hashlib.sha256(suffix.encode('utf-8')).hexdigest()}"
    return f"leaderboard:{site_identity()}:g{current_generation()}:{suffix}"
