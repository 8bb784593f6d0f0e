"""The progress callback handed to the engine: throttled writes, stages, log tail, cancellation, lost claims."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.engine.errors import RunCancelled
from evaluation.lifecycle import Throttle
from evaluation.models import Run
from evaluation.worker import ClaimLost, ProgressReporter
from tests.factories import make_submitted_run
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def claimed(dataset):
    run = make_submitted_run(dataset, make_researcher(), lifecycle={"preflight": {"passed": True}})
    claimed = Run.objects.claim_for_evaluation(run.pk, "worker-a", timezone.now() - timedelta(minutes=15))
    assert claimed is not None and claimed.status == Run.Status.DOWNLOADING and claimed.attempts == 1
    return claimed


def reporter_for(run: Run, clock: Clock, token: str = "worker-a") -> ProgressReporter:
    reporter = ProgressReporter(run, token)
    reporter.throttle = Throttle(1.0, clock=clock)
    reporter.detail_throttle = Throttle(10.0, clock=clock)
    return reporter


def test_it_writes_at_most_once_a_second_and_at_every_stage_change(claimed):
    clock = Clock()
    report = reporter_for(claimed, clock)
    report("DOWNLOADING", 1.0, "model files present")
    report("ENCODING", 0.0, "language 1 of 2 (hin): 0 of 40 texts")
    stored = Run.objects.get(pk=claimed.pk)
    assert stored.status == "ENCODING" and stored.progress == 10.0
    for step in range(1, 9):
        clock.now += 0.1
        report("ENCODING", step / 10, f"language 1 of 2 (hin): {step * 4} of 40 texts")
    stored = Run.objects.get(pk=claimed.pk)
    assert stored.progress == 10.0, "no write within a second of the last one"
    assert claimed.progress == overall(0.8), "the in-memory row is current for the engine"
    clock.now += 0.2
    report("ENCODING", 0.85, "language 2 of 2 (urd): 34 of 40 texts")
    stored = Run.objects.get(pk=claimed.pk)
    assert stored.progress == overall(0.85) and stored.stage_detail == "language 2 of 2 (urd): 34 of 40 texts"
    clock.now += 9
    report("ENCODING", 0.9, "language 2 of 2 (urd): 36 of 40 texts")
    report("SCORING", 0.5, "t2")
    stored = Run.objects.get(pk=claimed.pk)
    assert stored.status == "SCORING" and stored.progress == 92.5
    assert {"DOWNLOADING", "ENCODING", "SCORING"} <= set(stored.stage_timestamps)
    assert stored.heartbeat_at > claimed.started_at - timedelta(seconds=1)
    lines = stored.log_tail.splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "Downloading: model files present",
        "Encoding: language 1 of 2 (hin): 0 of 40 texts",
        # The detail written after one second is not logged; the one ten seconds on is.
        "Encoding: language 2 of 2 (urd): 36 of 40 texts",
        "Scoring: t2",
    ]


def overall(fraction: float) -> float:
    return round(10 + 75 * fraction, 2)


def test_it_stops_the_engine_when_the_run_is_cancelled(claimed):
    clock = Clock()
    report = reporter_for(claimed, clock)
    report("ENCODING", 0.1, "language 1 of 2")
    Run.objects.get(pk=claimed.pk).cancel()
    clock.now += 2
    with pytest.raises(RunCancelled):
        report("ENCODING", 0.2, "language 1 of 2")
    stored = Run.objects.get(pk=claimed.pk)
    assert stored.status == Run.Status.CANCELLED and stored.progress == overall(0.1)


def test_it_stops_a_worker_that_lost_its_claim(claimed):
    clock = Clock()
    report = reporter_for(claimed, clock)
    report("ENCODING", 0.1, "language 1 of 2")
    # The worker went silent; the run was given to another worker.
    Run.objects.filter(pk=claimed.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert Run.objects.claim_for_evaluation(claimed.pk, "worker-b", timezone.now() - timedelta(minutes=15))
    clock.now += 2
    with pytest.raises(ClaimLost, match="worker-b"):
        report("ENCODING", 0.2, "language 1 of 2")
    stored = Run.objects.get(pk=claimed.pk)
    assert stored.worker == "worker-b" and stored.attempts == 2 and stored.status == Run.Status.DOWNLOADING


def test_it_refuses_an_unknown_stage(claimed):
    with pytest.raises(ValueError, match="Unknown stage"):
        reporter_for(claimed, Clock())("TRAINING", 0.5, "")
