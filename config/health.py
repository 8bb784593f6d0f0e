"""Reachability checks for the database, the Celery broker and the cache, used by /healthz.

The details name the kind of service and the kind of failure only: no host, port or password, since
/healthz answers anyone.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.cache import caches
from django.db import connection

from config.cache import ResilientRedisCache
from config.celery_app import app


def _failure(exc: Exception) -> tuple[bool, str]:
    # The exception's message often names the host and port; its type says enough.
    return False, type(exc).__name__


def database_status() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # Any failure means unreachable.
        return _failure(exc)
    return True, connection.vendor


def broker_status() -> tuple[bool, str]:
    try:
        # The URL is read from settings on every call so that a changed setting is honoured.
        with app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=3)
            transport = conn.transport.driver_name
    except Exception as exc:
        return _failure(exc)
    return True, str(transport)


def cache_status() -> tuple[bool, str]:
    """Write and read back a short-lived key through the cache backend itself, not its fallback."""
    cache = caches["default"]
    key, value = f"healthz:{uuid.uuid4().hex}", "ok"
    try:
        if isinstance(cache, ResilientRedisCache):
            # Ask Redis directly: the resilient wrapper would turn an outage into a quiet miss.
            client = cache._cache.get_client(key, write=True)
            client.set(cache.make_and_validate_key(key), b"1", ex=10)
            ok = client.get(cache.make_and_validate_key(key)) is not None
            kind = "redis"
        else:
            cache.set(key, value, 10)
            ok = cache.get(key) == value
            kind = type(cache).__name__
        cache.delete(key)
    except Exception as exc:
        return _failure(exc)
    return ok, kind if ok else "the cache did not keep a value"
