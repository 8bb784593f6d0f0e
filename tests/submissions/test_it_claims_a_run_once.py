"""Two workers holding the same task never run the same run: the claim is a conditional update."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import Run
from tests.factories import make_submitted_run
from tests.people import make_researcher
from tests.submissions.concurrency import at_once

# Threads need committed rows: a transactional test.
pytestmark = [pytest.mark.django_db(transaction=True)]


def stale_before():
    return timezone.now() - timedelta(minutes=15)


def test_it_lets_exactly_one_of_eight_workers_claim_a_waiting_run(dataset):
    run = make_submitted_run(dataset, make_researcher(), lifecycle={"preflight": {"passed": True}})
    claims = at_once(
        [lambda n=n: Run.objects.claim_for_evaluation(run.pk, f"worker-{n}", stale_before()) for n in range(8)]
    )
    winners = [claim for claim in claims if isinstance(claim, Run)]
    assert len(winners) == 1, claims
    assert [claim for claim in claims if claim is not None and not isinstance(claim, Run)] == []
    run.refresh_from_db()
    assert run.worker == winners[0].worker and run.attempts == 1 and run.status == Run.Status.DOWNLOADING


def test_it_lets_exactly_one_worker_take_over_an_abandoned_run(dataset):
    run = make_submitted_run(
        dataset,
        make_researcher(),
        status=Run.Status.ENCODING,
        worker="dead-worker",
        attempts=1,
        heartbeat_at=timezone.now() - timedelta(hours=1),
        lifecycle={"preflight": {"passed": True}},
    )
    claims = at_once(
        [lambda n=n: Run.objects.claim_for_evaluation(run.pk, f"worker-{n}", stale_before()) for n in range(8)]
    )
    assert len([claim for claim in claims if isinstance(claim, Run)]) == 1, claims
    run.refresh_from_db()
    assert run.attempts == 2 and run.worker.startswith("worker-")


def test_it_does_not_take_a_run_from_a_live_worker_or_before_its_checks(dataset):
    researcher = make_researcher()
    live = make_submitted_run(
        dataset,
        researcher,
        status=Run.Status.ENCODING,
        worker="live",
        heartbeat_at=timezone.now(),
        lifecycle={"preflight": {"passed": True}},
    )
    unchecked = make_submitted_run(dataset, researcher)
    assert Run.objects.claim_for_evaluation(live.pk, "other", stale_before()) is None
    assert Run.objects.claim_for_evaluation(unchecked.pk, "other", stale_before()) is None
    claims = at_once([lambda n=n: Run.objects.claim_for_preflight(unchecked.pk, f"checker-{n}") for n in range(6)])
    assert len([claim for claim in claims if isinstance(claim, Run)]) == 1, claims
