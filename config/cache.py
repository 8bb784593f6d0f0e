"""The cache as an optimisation only: when Redis is unreachable, pages are built uncached.

Django's RedisCache raises on a refused or timed-out connection, which turned every cached page,
the API and allauth's log-in rate limits into a 500. This backend logs the outage and answers as an
empty cache would (a miss on reads, nothing stored on writes). After a failure it stops asking Redis
for a few seconds, so that an outage does not cost a connection attempt per cache call.
"""

from __future__ import annotations

import logging
import time
from functools import wraps

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger("config.cache")

# Seconds during which the cache is skipped after a failed call.
BACKOFF_SECONDS = 5.0
_OUTAGE_ERRORS = (RedisError, OSError)


def _fallback(name: str, args: tuple, kwargs: dict):
    if name == "get":
        return kwargs.get("default", args[1] if len(args) > 1 else None)
    if name == "get_many":
        return {}
    if name == "get_or_set":
        default = kwargs.get("default", args[1] if len(args) > 1 else None)
        return default() if callable(default) else default
    if name in ("incr", "decr"):
        # The same signal as a missing key, which callers already handle (leaderboard.cache).
        raise ValueError("The cache is unavailable.")
    if name == "add":
        # As if the key was absent and is now set: locks built on add() (allauth's rate limits) go
        # ahead instead of waiting for a cache that is not there. allauth's log-in limits are off while
        # it is down; the submission limits count in each process's memory (evaluation/ratelimits.py).
        return True
    if name == "set_many":
        return list(args[0]) if args else []
    return False


class ResilientRedisCache(RedisCache):
    """RedisCache whose outage is logged and answered as a cache miss, never as an error."""

    # When each Redis (by its location) may be asked again; shared by the threads of a process.
    _down_until: dict[str, float] = {}

    def is_down(self) -> bool:
        """Whether a call found Redis unreachable within the last back-off period."""
        return time.monotonic() < self._down_until.get(",".join(self._servers), 0.0)

    def _guarded(self, name: str, method, *args, **kwargs):
        where = ",".join(self._servers)
        if time.monotonic() < self._down_until.get(where, 0.0):
            return _fallback(name, args, kwargs)
        try:
            return method(*args, **kwargs)
        except _OUTAGE_ERRORS as exc:
            self._down_until[where] = time.monotonic() + BACKOFF_SECONDS
            logger.warning("Cache unavailable (%s); serving without it for %.0f s", type(exc).__name__, BACKOFF_SECONDS)
            return _fallback(name, args, kwargs)


def _wrap(name: str):
    original = getattr(RedisCache, name)

    @wraps(original)
    def method(self, *args, **kwargs):
        return self._guarded(name, original.__get__(self), *args, **kwargs)

    return method


for _name in (
    "get", "set", "add", "touch", "delete", "get_many", "set_many", "delete_many",
    "has_key", "incr", "decr", "clear", "get_or_set",
):  # fmt: skip
    setattr(ResilientRedisCache, _name, _wrap(_name))


def redis_cache(location: str) -> dict:
    """The CACHES entry for a Redis page cache with short timeouts (a slow cache is an outage)."""
    return {
        "BACKEND": "config.cache.ResilientRedisCache",
        "LOCATION": location,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
