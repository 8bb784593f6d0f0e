"""A broker outage loses no submission: the run and its outbox mark commit together, 503 says so, the
sweeper sends the run when the broker is back, and a real worker then takes it exactly once."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation import outbox
from evaluation.models import Run
from evaluation.submissions import submissions_left
from evaluation.tasks import sweep_stalled_runs
from tests.people import make_admin
from tests.services import celery_broker, closed_port_url, own_redis
from tests.workers import running_worker

LIST = "/api/submissions/"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.django_db(transaction=True)
def test_it_answers_503_with_the_run_id_and_keeps_the_run_marked_for_sending(dataset, model_copy):
    admin = make_admin()
    client = token_client(admin)
    before = submissions_left(admin)
    with celery_broker(closed_port_url()):
        started = time.monotonic()
        response = client.post(LIST, {"model": str(model_copy("a"))}, format="json")
        took = time.monotonic() - started
    assert response.status_code == 503, response.content
    body = response.json()
    run = Run.objects.get()
    assert body["code"] == "queue_unavailable" and body["run"]["id"] == run.pk
    assert "do not submit again" in body["detail"] and response["Retry-After"] == "60"
    assert run.status == Run.Status.QUEUED and run.enqueue_pending_since is not None
    # The run will run, so it is accepted and counts; submitting it again points at it.
    assert submissions_left(admin) == before - 1
    with celery_broker(closed_port_url()):
        again = client.post(LIST, {"model": run.model.name}, format="json")
    assert again.status_code == 409 and again.json()["run"]["id"] == run.pk
    assert took < 10


@pytest.mark.django_db(transaction=True)
def test_it_answers_503_on_the_form_and_on_a_staff_requeue(client, dataset, model_copy):
    admin = make_admin()
    client.force_login(admin)
    with celery_broker(closed_port_url()):
        response = client.post("/evaluation/submit/", {"model": str(model_copy("b")), "dataset": dataset.pk})
    run = Run.objects.get()
    assert response.status_code == 503, response.content.decode()[:2000]
    assert f"Run {run.pk} is recorded" in response.content.decode()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, enqueue_pending_since=None)
    with celery_broker(closed_port_url()):
        requeued = token_client(admin).post(f"{LIST}{run.pk}/requeue/")
    assert requeued.status_code == 503 and requeued.json()["run"]["id"] == run.pk
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED and run.enqueue_pending_since is not None


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_it_sends_pending_runs_when_the_broker_returns_and_a_real_worker_runs_each_once(dataset, model_copy):
    admin = make_admin()
    client = token_client(admin)
    with own_redis() as redis, celery_broker(redis.url):
        redis.stop()
        answers = [client.post(LIST, {"model": str(model_copy(f"m{k}"))}, format="json") for k in range(3)]
        assert [answer.status_code for answer in answers] == [503, 503, 503]
        # The sweeper cannot send anything while the broker is down; the marks stay.
        assert sweep_stalled_runs.apply().get() == []
        assert Run.objects.filter(enqueue_pending_since__isnull=False).count() == 3

        redis.start()
        Run.objects.update(enqueue_pending_since=timezone.now() - timedelta(minutes=1))  # Past the grace period.
        sweep_stalled_runs.apply().get()
        assert not Run.objects.filter(enqueue_pending_since__isnull=False).exists()
        # Sending again (as a lost clearing write would) must not run anything twice.
        for run in Run.objects.all():
            outbox.mark(run)
        with running_worker("preflight", extra_env={"CELERY_BROKER_URL": redis.url}):
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if all(run.preflight_passed for run in Run.objects.all()):
                    break
                time.sleep(0.5)
    runs = list(Run.objects.all())
    assert all(run.preflight_passed and run.status == Run.Status.QUEUED for run in runs)
    assert [run.log_tail.count("Pre-flight checks started") for run in runs] == [1, 1, 1]
