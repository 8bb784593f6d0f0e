"""The embedded set-up (no broker configured: kombu's filesystem transport) connects without kombu's
warning that no hostname was supplied, which every process of `scripts/start` printed as if the set-up
were wrong."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.data import REPO_ROOT

CONNECT = """
import logging
import django
logging.basicConfig(level=logging.WARNING)
django.setup()
from config.celery_app import app
with app.connection_for_write() as connection:
    connection.ensure_connection(max_retries=1)
    # The worker's start-up banner names its broker this way, and kombu warned there.
    print("connected", connection.as_uri())
"""


def test_the_default_broker_connects_without_a_warning(tmp_path):
    unset = {"CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "DATABASE_URL", "REDIS_URL"}
    env = {name: value for name, value in os.environ.items() if name not in unset}
    env |= {"DJANGO_SETTINGS_MODULE": "config.settings.local", "NIRDESHA_VAR_DIR": str(tmp_path / "var")}
    result = subprocess.run(
        [sys.executable, "-c", CONNECT], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "connected filesystem://" in result.stdout
    assert "WARNING" not in result.stderr, result.stderr[-3000:]
