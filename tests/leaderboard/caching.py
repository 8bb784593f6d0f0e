"""How many entries the configured page cache holds, whatever the backend the tests run with."""

from __future__ import annotations

from django.core.cache import cache


def cache_entries() -> int:
    """Files of the local file cache, keys in Redis (CI), entries of the local-memory cache."""
    if hasattr(cache, "_list_cache_files"):
        return len(cache._list_cache_files())
    if hasattr(cache._cache, "get_client"):
        client = cache._cache.get_client(None)
        return sum(1 for _ in client.scan_iter(match=cache.make_key("*")))
    return len(cache._cache)
