"""Reachability checks for the database and the Celery broker, used by /healthz."""

from __future__ import annotations

from django.db import connection


def database_status() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # Any failure means unreachable; the message says which.
        return False, f"{type(exc).__name__}: {exc}"
    return True, connection.vendor


def broker_status() -> tuple[bool, str]:
    from django.conf import settings

    from config.celery_app import app

    try:
        # The URL is read from settings on every call so that a changed setting is honoured.
        with app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=3)
            transport = conn.transport_cls
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, str(transport)
