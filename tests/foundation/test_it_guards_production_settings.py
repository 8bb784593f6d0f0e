import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-for-the-check-only-0123456789",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "REDIS_URL": "redis://127.0.0.1:6379/2",
    "ALLOWED_HOSTS": "leaderboard.example.org",
}


def run_manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    # The browser fixture sets DJANGO_ALLOW_ASYNC_UNSAFE for the test process; a deployment must not.
    leaked = {*GOOD_ENV, "DJANGO_ALLOW_ASYNC_UNSAFE"}
    base = {k: v for k, v in os.environ.items() if k not in leaked}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**base, **env}, capture_output=True, text=True
    )


@pytest.mark.slow
def test_it_passes_the_deploy_check_with_every_value_set():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=GOOD_ENV)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_it_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in GOOD_ENV.items() if k != "SECRET_KEY"}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_it_refuses_to_start_on_sqlite():
    result = run_manage("check", env={**GOOD_ENV, "DATABASE_URL": "sqlite:////tmp/x.sqlite3"})
    assert result.returncode != 0
    assert "PostgreSQL" in result.stderr


def test_it_refuses_to_start_without_a_broker():
    env = {k: v for k, v in GOOD_ENV.items() if k != "CELERY_BROKER_URL"}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "CELERY_BROKER_URL" in result.stderr
