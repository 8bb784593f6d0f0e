"""Under pytest-xdist (`./scripts/test -n 2`) each test process gets Redis databases and a var folder
of its own, and the processes its tests start (Celery workers) use the same ones, not moved twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READ_SETTINGS = (
    "import json, os; from config.settings import test as s; "
    "print(json.dumps({'broker': s.CELERY_BROKER_URL, 'results': s.CELERY_RESULT_BACKEND, "
    "'cache': s.CACHES['default'].get('LOCATION'), 'run': s.TEST_RUN_ID, "
    "'env': {k: os.environ.get(k) for k in ('CELERY_BROKER_URL', 'REDIS_URL', 'NIRDESHA_TEST_WORKER')}}))"
)


def settings_seen(extra: dict[str, str]) -> dict:
    names = ("PYTEST_XDIST_WORKER", "NIRDESHA_TEST_WORKER", "CACHE_URL", "DATABASE_URL")
    env = {key: value for key, value in os.environ.items() if key not in names}
    env.update(
        {
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
            "CELERY_RESULT_BACKEND": "redis://127.0.0.1:6379/1",
            "REDIS_URL": "redis://127.0.0.1:6379/2",
            "NIRDESHA_TEST_RUN_ID": "4242",
            **extra,
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", READ_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_each_worker_gets_redis_databases_and_a_folder_of_its_own():
    alone = settings_seen({})
    first = settings_seen({"PYTEST_XDIST_WORKER": "gw0"})
    second = settings_seen({"PYTEST_XDIST_WORKER": "gw1"})
    assert (alone["broker"], alone["results"], alone["cache"], alone["run"]) == (
        "redis://127.0.0.1:6379/0",
        "redis://127.0.0.1:6379/1",
        "redis://127.0.0.1:6379/2",
        "4242",
    )
    assert (first["broker"], first["results"], first["cache"], first["run"]) == (
        "redis://127.0.0.1:6379/3",
        "redis://127.0.0.1:6379/4",
        "redis://127.0.0.1:6379/5",
        "4242-gw0",
    )
    assert (second["broker"], second["cache"], second["run"]) == (
        "redis://127.0.0.1:6379/6",
        "redis://127.0.0.1:6379/8",
        "4242-gw1",
    )


def test_a_process_started_by_a_worker_uses_the_same_databases():
    worker = settings_seen({"PYTEST_XDIST_WORKER": "gw1"})
    # What a Celery worker started by one of gw1's tests inherits: the rewritten environment.
    child = settings_seen(
        {
            "PYTEST_XDIST_WORKER": "gw1",
            "NIRDESHA_TEST_WORKER": worker["env"]["NIRDESHA_TEST_WORKER"],
            "CELERY_BROKER_URL": worker["env"]["CELERY_BROKER_URL"],
            "REDIS_URL": worker["env"]["REDIS_URL"],
            "NIRDESHA_TEST_RUN_ID": worker["run"],
        }
    )
    assert (child["broker"], child["cache"], child["run"]) == (worker["broker"], worker["cache"], worker["run"])
