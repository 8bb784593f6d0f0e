"""Typed readers for deploy values taken from the environment.

Secrets may also be given as a path in ``NAME_FILE`` (Docker and Kubernetes secrets), which wins
over ``NAME`` so that a secret never has to sit in the process environment.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str | None = None) -> str | None:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        return Path(file_path).read_text(encoding="utf-8").strip()
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value


def env_required(name: str) -> str:
    """Return a value production cannot run without, failing loudly when it is absent."""
    value = env_str(name)
    if not value:
        raise ImproperlyConfigured(f"The environment variable {name} (or {name}_FILE) must be set.")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    value = env_str(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {value!r}.")


def env_int(name: str, default: int) -> int:
    value = env_str(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}.") from exc


def env_float(name: str, default: float) -> float:
    value = env_str(name)
    if value is None:
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}.") from exc


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    value = env_str(name)
    if value is None:
        return list(default or [])
    return [part.strip() for part in value.split(",") if part.strip()]


def redis_broker_options() -> dict[str, int]:
    """kombu's Redis transport options: when a message a worker took and never acknowledged (its worker
    died) is delivered again.

    It becomes visible again CELERY_VISIBILITY_TIMEOUT seconds after delivery (6 hours by default: a
    long evaluation must not be handed to a second worker while the first still works on it), but
    only when a worker next sweeps for such messages. kombu sweeps every 10 x 10 seconds by default,
    which added up to 100 s to a short timeout (a 20 s timeout took 80 s to redeliver); the sweep
    here runs every tenth of the timeout, between 1 and those 100 seconds, so a lost message waits at
    most 1.1 times its timeout (and 100 s more at the default, as before)."""
    visibility = env_int("CELERY_VISIBILITY_TIMEOUT", 6 * 3600)
    return {
        "visibility_timeout": visibility,
        "unacked_restore_interval": max(1, min(100, visibility // 10)),
        "unacked_restore_throttle": 1,
    }
