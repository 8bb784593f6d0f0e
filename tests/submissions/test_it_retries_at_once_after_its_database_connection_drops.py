"""A database connection dropped mid-evaluation costs seconds, not the stall limit: the worker's retry step
replaces the dead connection, records the retry, and the next attempt finishes the run.

The tester's fault: the retry step failed on the dead connection, the run kept its claim, and only the
sweeper freed it after RUN_STALL_SECONDS (about 17 minutes with production defaults).
"""

from __future__ import annotations

import time

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import Run
from tests.people import make_admin
from tests.submissions.waiting import is_over, wait_for_run
from tests.workers import running_worker

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
STALL_SECONDS = 900


def test_a_run_whose_connection_is_terminated_mid_evaluation_is_done_well_within_the_stall_limit(dataset, tiny_model):
    if connection.vendor != "postgresql":
        pytest.skip("terminates connections with pg_terminate_backend: PostgreSQL only (DATABASE_URL)")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_admin()).key}")
    response = client.post("/api/submissions/", {"model": str(tiny_model)}, format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    # No sweeper runs here: only the worker's own retry can bring the run back.
    worker_env = {"RUN_STALL_SECONDS": str(STALL_SECONDS), "RUN_RETRY_BACKOFF_SECONDS": "1"}
    with running_worker(queues="preflight,gpu", extra_env=worker_env):
        wait_for_run(run_id, lambda run: run.status in Run.EVALUATION_STATUSES)
        started = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] > 0
        run = wait_for_run(run_id, is_over, timeout=STALL_SECONDS / 3)
        took = time.monotonic() - started
    assert run.status == Run.Status.DONE, f"{run.message}\n{run.log_tail}"
    assert took < STALL_SECONDS / 3
    print(f"DONE {took:.0f} s after the worker's connection was terminated; attempts: {run.attempts}")
