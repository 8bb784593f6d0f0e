"""The evaluate_run task retries failures on our side (here: the Hub goes away) with back-off, then gives up."""

from __future__ import annotations

import pytest

from evaluation.models import Run
from evaluation.submissions import Submission, submit
from evaluation.tasks import evaluate_run
from evaluation.worker import PASSED, RetryLater, run_evaluation, run_preflight
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def checked_hub_run(dataset, tiny_model, fake_hub) -> Run:
    """A Hub model that passed its checks, after which the Hub stopped answering."""
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    run = submit(make_researcher(), Submission(model="tiny-org/tiny-encoder"))
    assert run_preflight(run.pk) == PASSED
    fake_hub.stop()
    return run


def test_it_puts_the_run_back_in_the_queue_and_asks_for_a_retry(checked_hub_run, settings):
    settings.RUN_MAX_ATTEMPTS = 3
    with pytest.raises(RetryLater, match="HubUnreachableError"):
        run_evaluation(checked_hub_run.pk)
    run = Run.objects.get(pk=checked_hub_run.pk)
    assert run.status == Run.Status.QUEUED and run.worker == "" and run.attempts == 1
    assert run.message.startswith("Retrying after HubUnreachableError")
    assert run.lifecycle["attempts"][0]["outcome"] == "retry"
    assert run.failure_category == ""


def test_it_retries_through_celery_until_the_attempts_run_out(checked_hub_run, settings):
    settings.RUN_MAX_ATTEMPTS = 3
    # Applied eagerly, Celery's retry runs the task again at once instead of after the back-off.
    evaluate_run.apply(args=(checked_hub_run.pk,))
    run = Run.objects.get(pk=checked_hub_run.pk)
    assert run.status == Run.Status.FAILED and run.failure_category == Run.FailureCategory.OURS
    assert run.attempts == 3
    assert [attempt["outcome"] for attempt in run.lifecycle["attempts"]] == ["retry", "retry", "failed"]
    assert run.message.startswith("The evaluation failed 3 times; last: HubUnreachableError")
