"""Staff put failed or cancelled runs back in the queue, from its pre-flight checks."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_submitted_run
from tests.people import make_admin, make_researcher
from tests.submissions.data import drain_queue

pytestmark = pytest.mark.django_db


def requeue_url(run: Run) -> str:
    return reverse("evaluation:run_requeue", args=[run.pk])


def test_it_requeues_a_failed_run_and_sends_its_preflight_task(client, dataset, django_capture_on_commit_callbacks):
    drain_queue("preflight")
    run = make_submitted_run(
        dataset,
        make_researcher(),
        status=Run.Status.FAILED,
        failure_category=Run.FailureCategory.OURS,
        message="worker lost",
        attempts=4,
        lifecycle={"preflight": {"passed": True}, "attempts": [{"number": 1, "outcome": "lost"}]},
    )
    client.force_login(make_admin())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(requeue_url(run), follow=True)
    run.refresh_from_db()
    assert "The run is back in the queue." in response.content.decode()
    assert run.status == Run.Status.QUEUED and run.failure_category == "" and run.message == ""
    assert run.attempts == 0 and "preflight" not in run.lifecycle
    assert run.lifecycle["attempts"] == [{"number": 1, "outcome": "lost"}]  # History is kept.
    assert drain_queue("preflight") == [("evaluation.preflight_run", [run.pk])]


def test_it_refuses_people_who_are_not_staff(client, dataset):
    researcher = make_researcher()
    run = make_submitted_run(dataset, researcher, status=Run.Status.FAILED)
    client.force_login(researcher)
    assert client.post(requeue_url(run)).status_code == 403
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED


def test_it_refuses_a_run_that_is_not_over_or_succeeded(client, dataset):
    run = make_submitted_run(dataset, make_researcher(), status=Run.Status.DONE)
    client.force_login(make_admin())
    response = client.post(requeue_url(run), follow=True)
    assert "Only failed or cancelled runs can be re-queued." in response.content.decode()
    run.refresh_from_db()
    assert run.status == Run.Status.DONE


def test_it_refuses_when_another_live_run_has_the_same_commit(client, dataset):
    failed = make_submitted_run(dataset, make_researcher(), status=Run.Status.FAILED, engine_version="e1")
    Run.objects.create(model=failed.model, dataset=dataset, resolved_commit=failed.resolved_commit, engine_version="e1")
    client.force_login(make_admin())
    response = client.post(requeue_url(failed), follow=True)
    assert "Another live run of this model commit exists" in response.content.decode()
    failed.refresh_from_db()
    assert failed.status == Run.Status.FAILED
