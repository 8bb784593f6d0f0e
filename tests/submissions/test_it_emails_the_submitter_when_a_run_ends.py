"""An opt-in e-mail when one's run ends: DONE with a link to its results, FAILED with the reason."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from evaluation.models import Run
from evaluation.submissions import Submission
from tests.factories import make_dataset, make_submitted_run
from tests.people import make_researcher

pytestmark = pytest.mark.django_db
TOKEN = "worker-7"


@pytest.fixture
def running(settings):
    settings.SITE_URL = "https://nirdesha.example.org"
    dataset, researcher = make_dataset(), make_researcher()

    def make(notify: bool = True) -> Run:
        return make_submitted_run(dataset, researcher, status=Run.Status.ENCODING, worker=TOKEN, notify_by_email=notify)

    return make


def test_it_writes_when_the_run_is_done(running, django_capture_on_commit_callbacks):
    run = running()
    with django_capture_on_commit_callbacks(execute=True):
        assert run.finish_as(TOKEN)
    (message,) = mail.outbox
    assert message.to == ["rahul.researcher@example.org"]
    assert message.subject == f"Run {run.pk} is done: {run.model.label} on {run.dataset}"
    assert f"https://nirdesha.example.org/results/{run.pk}/" in message.body


def test_it_writes_the_reason_when_the_run_fails(running, django_capture_on_commit_callbacks):
    run = running()
    with django_capture_on_commit_callbacks(execute=True):
        assert run.fail_as(TOKEN, Run.FailureCategory.SUBMITTER, "The weights do not load: size mismatch.")
    (message,) = mail.outbox
    assert message.subject.startswith(f"Run {run.pk} failed:")
    assert "Reason: Problem with the submitted model: The weights do not load: size mismatch." in message.body
    assert f"https://nirdesha.example.org/evaluation/runs/{run.pk}/" in message.body


def test_it_writes_nothing_unless_asked_and_nothing_before_the_write_commits(
    running, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        running(notify=False).finish_as(TOKEN)
    assert mail.outbox == []
    asked = running()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        asked.finish_as(TOKEN)
    assert mail.outbox == [] and callbacks


def test_the_form_and_the_api_offer_the_choice():
    client = Client()
    client.force_login(make_researcher())
    page = client.get(reverse("evaluation:submit")).content.decode()
    assert 'name="notify_by_email"' in page and "E-mail me when the run ends" in page
    from evaluation.api.serializers import SubmissionCreateSerializer

    serializer = SubmissionCreateSerializer(data={"model": "org/model", "notify_by_email": True})
    assert serializer.is_valid(), serializer.errors
    assert serializer.to_submission() == Submission(model="org/model", notify_by_email=True)
