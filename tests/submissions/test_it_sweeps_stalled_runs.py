"""The sweep_stalled_runs task (run by beat): runs whose worker went silent go back to the queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.execution import run_languages
from evaluation.models import Run
from evaluation.tasks import split_evaluation
from evaluation.tasks import sweep_stalled_runs as sweep_task
from evaluation.worker import sweep_stalled_runs
from tests.factories import make_submitted_run
from tests.people import make_researcher
from tests.submissions.data import drain_queue

pytestmark = pytest.mark.django_db


def silent_for(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


@pytest.fixture
def researcher():
    return make_researcher()


def silent_evaluation(dataset, researcher) -> Run:
    """A checked run whose worker stopped writing heartbeats two minutes ago, mid-encoding."""
    return make_submitted_run(
        dataset,
        researcher,
        status=Run.Status.ENCODING,
        heartbeat_at=silent_for(120),
        worker="w1",
        attempts=1,
        progress=40.0,
        stage_detail="language 3 of 6 (hin): 20 of 300 texts",
        lifecycle={"preflight": {"passed": True}, "attempts": [{"number": 1, "worker": "w1"}]},
    )


def test_it_requeues_a_silent_evaluation_and_sends_it_again(
    settings, dataset, researcher, django_capture_on_commit_callbacks
):
    settings.RUN_STALL_SECONDS = 60
    drain_queue("gpu")
    silent = silent_evaluation(dataset, researcher)
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_task.apply().get() == [silent.pk]
    silent.refresh_from_db()
    assert silent.status == Run.Status.QUEUED and silent.worker == ""
    assert silent.stage_detail == "re-queued after its worker stopped responding"
    lost = silent.lifecycle["attempts"][0]
    assert lost["outcome"] == "lost" and lost["worker"] == "w1" and lost["last_progress"] == 40.0
    assert lost["last_detail"] == "language 3 of 6 (hin): 20 of 300 texts"
    assert "No heartbeat from the worker since" in silent.log_tail
    assert drain_queue("gpu") == [("evaluation.evaluate_run", [silent.pk])]


def test_it_sends_a_split_run_again_as_a_split(settings, dataset, researcher, django_capture_on_commit_callbacks):
    """With EVALUATION_SPLIT_ENCODING a re-queued run is split again, through the same outbox."""
    settings.RUN_STALL_SECONDS = 60
    settings.EVALUATION_SPLIT_ENCODING = True
    drain_queue("gpu")
    silent = silent_evaluation(dataset, researcher)
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_task.apply().get() == [silent.pk]
    assert drain_queue("gpu") == [("evaluation.split_evaluation", [silent.pk])]
    # The split task sends one encode task per language (the chord's header) to the GPU workers.
    languages = run_languages(silent)
    assert split_evaluation.apply(args=[silent.pk]).get() == len(languages) > 1
    sent = drain_queue("gpu")
    encodes = sorted(args for name, args in sent if name == "evaluation.encode_run_language")
    assert encodes == sorted([silent.pk, code] for code in languages)
    # Scoring waits for them: a result backend that cannot count (files) polls with chord_unlock.
    assert {name for name, _ in sent} <= {"evaluation.encode_run_language", "celery.chord_unlock"}


def test_it_sends_a_run_lost_in_its_checks_back_to_the_checks(
    settings, dataset, researcher, django_capture_on_commit_callbacks
):
    settings.RUN_STALL_SECONDS = 60
    drain_queue("preflight")
    lost = make_submitted_run(dataset, researcher, status=Run.Status.PREFLIGHT, heartbeat_at=silent_for(120))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_stalled_runs() == [lost.pk]
    assert drain_queue("preflight") == [("evaluation.preflight_run", [lost.pk])]


def test_it_leaves_live_waiting_and_finished_runs_alone(settings, dataset, researcher):
    settings.RUN_STALL_SECONDS = 60
    live = make_submitted_run(dataset, researcher, status=Run.Status.ENCODING, heartbeat_at=silent_for(5))
    waiting = make_submitted_run(dataset, researcher, status=Run.Status.QUEUED, heartbeat_at=silent_for(3600))
    done = make_submitted_run(dataset, researcher, status=Run.Status.DONE, heartbeat_at=silent_for(3600))
    assert sweep_stalled_runs() == []
    assert sweep_stalled_runs(older_than=1) == [live.pk]
    for run, status in ((waiting, Run.Status.QUEUED), (done, Run.Status.DONE)):
        run.refresh_from_db()
        assert run.status == status


def test_it_gives_up_after_too_many_lost_attempts(settings, dataset, researcher):
    settings.RUN_STALL_SECONDS = 60
    settings.RUN_MAX_ATTEMPTS = 3
    run = make_submitted_run(dataset, researcher, status=Run.Status.SCORING, heartbeat_at=silent_for(120), attempts=3)
    assert sweep_stalled_runs() == []
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and run.failure_category == Run.FailureCategory.OURS
    assert run.message == "The worker evaluating this run was lost 3 times; giving up."
    assert run.finished_at is not None
