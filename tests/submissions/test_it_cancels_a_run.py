"""Cancelling a run from its page: the submitter (or staff) only, by POST with the CSRF token."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_submitted_run
from tests.people import make_admin, make_outsider, make_researcher

pytestmark = pytest.mark.django_db


def cancel_url(run: Run) -> str:
    return reverse("evaluation:run_cancel", args=[run.pk])


def csrf_client(user) -> tuple[Client, str]:
    """A browser-like client holding the CSRF token that any page with a form hands out."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get(reverse("evaluation:submit"))
    return client, client.cookies["csrftoken"].value


def test_it_cancels_the_submitters_running_run(dataset):
    researcher = make_researcher()
    run = make_submitted_run(dataset, researcher, status=Run.Status.ENCODING, stage_timestamps={"ENCODING": "t"})
    client, token = csrf_client(researcher)
    response = client.post(cancel_url(run), {"csrfmiddlewaretoken": token}, follow=True)
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED and run.finished_at is not None
    assert list(run.stage_timestamps) == ["ENCODING", "CANCELLED"]
    assert "The run is cancelled." in response.content.decode()


def test_it_refuses_a_forged_cancel_without_the_csrf_token(dataset):
    researcher = make_researcher()
    run = make_submitted_run(dataset, researcher)
    client, _ = csrf_client(researcher)
    assert client.post(cancel_url(run)).status_code == 403
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED


def test_it_refuses_to_cancel_someone_elses_run(dataset):
    run = make_submitted_run(dataset, make_researcher())
    client, token = csrf_client(make_outsider())
    assert client.post(cancel_url(run), {"csrfmiddlewaretoken": token}).status_code == 404
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED


def test_it_lets_staff_cancel_any_run(dataset):
    run = make_submitted_run(dataset, make_researcher())
    client, token = csrf_client(make_admin())
    client.post(cancel_url(run), {"csrfmiddlewaretoken": token})
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED


def test_it_does_not_cancel_a_finished_run(client, dataset):
    researcher = make_researcher()
    run = make_submitted_run(dataset, researcher, status=Run.Status.DONE)
    client.force_login(researcher)
    response = client.post(cancel_url(run), follow=True)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert "This run is already over." in response.content.decode()


def test_it_rejects_get(client, dataset):
    researcher = make_researcher()
    run = make_submitted_run(dataset, researcher)
    client.force_login(researcher)
    assert client.get(cancel_url(run)).status_code == 405
