"""Start a real Celery worker process against the test database and the configured broker."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def database_url_for_test_db() -> str:
    """The URL of the database the tests are using right now (the test database, not the main one)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@contextmanager
def running_worker(
    queues: str = "default,preflight,gpu", *, log_path: Path | None = None, extra_env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    """Run `celery -A config worker` in a child process for the duration of the block.

    The caller must use a transactional database fixture: the worker is another process and only
    sees committed rows.
    """
    env = os.environ.copy()
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url_for_test_db(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra_env or {})
    log_path = log_path or Path(settings.TEST_VAR_DIR) / f"worker-{uuid.uuid4().hex[:8]}.log"
    log_file = open(log_path, "w")  # noqa: SIM115 - closed in the finally block below.
    command = [
        sys.executable, "-m", "celery", "-A", "config", "worker",
        "--pool=solo", "--loglevel=INFO", "-Q", queues,
        "-n", f"test-{uuid.uuid4().hex[:8]}@%h", "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log_file.close()
