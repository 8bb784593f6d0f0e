"""A broker that forgets loses no run: a run still waiting for a worker RUN_UNCLAIMED_RESEND_SECONDS after
its task was sent is sent again by the sweeper, and the claim keeps it single.

The tester's fault: Redis lost its data while a run waited in the queue; 210 s later the run was still
QUEUED with no pending mark, and nothing would ever have started it.
"""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import Run
from evaluation.tasks import sweep_stalled_runs
from tests.people import make_admin
from tests.services import OwnRedis, celery_broker, own_redis
from tests.submissions.waiting import is_over, wait_for_run
from tests.workers import running_worker

pytestmark = pytest.mark.django_db(transaction=True)
RESEND_SECONDS = 5


@pytest.fixture
def api():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_admin()).key}")
    return client


def flush(redis: OwnRedis) -> None:
    """The broker's data lost: this test's own Redis, emptied."""
    subprocess.run(["redis-cli", "-p", str(redis.port), "FLUSHALL"], check=True, capture_output=True)
    assert subprocess.run(["redis-cli", "-p", str(redis.port), "DBSIZE"], capture_output=True).stdout.strip() == b"0"


def submit(api, folder) -> int:
    response = api.post("/api/submissions/", {"model": str(folder)}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def figures(run: Run) -> dict[tuple, float]:
    return {(s.task, s.source, s.target, s.metric): s.value for s in run.scores.all()}


def test_the_sweeper_sends_again_only_the_runs_waiting_unclaimed_past_the_setting(api, settings, dataset, model_copy):
    settings.RUN_UNCLAIMED_RESEND_SECONDS = RESEND_SECONDS
    with own_redis() as redis, celery_broker(redis.url):
        waiting, taken = submit(api, model_copy("waiting")), submit(api, model_copy("taken"))
        assert Run.objects.get(pk=waiting).sent_at is not None
        flush(redis)
        Run.objects.filter(pk=taken).update(status=Run.Status.PREFLIGHT, worker="w-34b", heartbeat_at=timezone.now())
        # Within the setting: a message may simply still be on its way to a worker.
        sweep_stalled_runs.apply().get()
        assert (
            int(subprocess.run(["redis-cli", "-p", str(redis.port), "LLEN", "preflight"], capture_output=True).stdout)
            == 0
        )
        Run.objects.update(sent_at=timezone.now() - timedelta(seconds=RESEND_SECONDS + 1))
        sweep_stalled_runs.apply().get()
        queued = int(
            subprocess.run(["redis-cli", "-p", str(redis.port), "LLEN", "preflight"], capture_output=True).stdout
        )
        # Sent again once, and marked as sent: the next sweep leaves it until the setting passes again.
        assert queued == 1
        sweep_stalled_runs.apply().get()
        again = int(
            subprocess.run(["redis-cli", "-p", str(redis.port), "LLEN", "preflight"], capture_output=True).stdout
        )
        assert again == 1
    run = Run.objects.get(pk=waiting)
    assert run.enqueue_pending_since is None and run.sent_at > timezone.now() - timedelta(seconds=RESEND_SECONDS)


@pytest.mark.worker
@pytest.mark.slow
def test_a_run_whose_queued_message_was_flushed_reaches_done_once_with_undisturbed_figures(
    api, settings, dataset, model_copy
):
    settings.RUN_UNCLAIMED_RESEND_SECONDS = RESEND_SECONDS
    with own_redis() as redis, celery_broker(redis.url):
        undisturbed = submit(api, model_copy("undisturbed"))
        with running_worker(queues="preflight,gpu", extra_env={"CELERY_BROKER_URL": redis.url}):
            reference = wait_for_run(undisturbed, is_over)
        assert reference.status == Run.Status.DONE, f"{reference.message}\n{reference.log_tail}"

        flushed = submit(api, model_copy("flushed"))
        flush(redis)
        with running_worker(queues="preflight,gpu", extra_env={"CELERY_BROKER_URL": redis.url}):
            # Beat's part, played here: the sweeper every second or so while the run waits.
            def swept(run: Run) -> bool:
                sweep_stalled_runs.apply().get()
                time.sleep(1)
                return run.is_terminal

            run = wait_for_run(flushed, swept, timeout=300)
    assert run.status == Run.Status.DONE, f"{run.message}\n{run.log_tail}"
    assert run.log_tail.count("Pre-flight checks started") == 1
    assert run.attempts == 1 and len(run.life.attempts) == 1
    assert figures(run) == figures(reference) and figures(run)
