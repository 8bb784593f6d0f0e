import os

import pytest

from config.celery_app import ping
from tests.workers import running_worker

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_it_runs_a_task_in_a_real_worker_process_over_the_configured_broker():
    with running_worker(queues="default") as worker:
        answer = ping.apply_async(queue="default").get(timeout=120)
    assert answer["pid"] == worker.pid
    assert answer["pid"] != os.getpid()
