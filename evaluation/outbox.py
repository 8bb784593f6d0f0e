"""Sending a run's next task through a transactional outbox, so that a broker outage loses nothing.

A run that needs a task sent is marked in the same transaction that records it
(`Run.enqueue_pending_since`); the task is published after that transaction commits, and the mark is
cleared only once the broker has taken the message. When the broker is down, the mark stays: the
person is told the run is recorded and will start, and the beat-driven sweeper publishes every
pending run again once the broker is back. A message sent twice (published, then the clearing write
lost) is harmless: workers take a run by a conditional update on its row, so only one of them runs it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import current_app
from django.db import transaction
from django.utils import timezone

from evaluation.models import Run

logger = logging.getLogger(__name__)

# How long a fresh mark is left to the publish that follows its own commit before the sweeper may
# publish it too: a message in flight should not normally be sent twice.
SWEEP_GRACE = timedelta(seconds=15)
# One quick attempt: a person is waiting on the answer, and the sweeper retries for them later.
PUBLISH_RETRY_POLICY = {"max_retries": 0, "interval_start": 0, "interval_step": 0, "interval_max": 0}


class BrokerUnavailable(Exception):
    """The run is recorded but its task could not be sent yet; the sweeper will send it later."""


def mark(run: Run) -> None:
    """Mark the run as waiting to be sent, inside the caller's transaction, and publish after commit."""
    now = timezone.now()
    Run.objects.filter(pk=run.pk).update(enqueue_pending_since=now)
    run.enqueue_pending_since = now
    run.publish_failed = False

    def after_commit() -> None:
        run.publish_failed = not publish(run.pk)

    transaction.on_commit(after_commit, robust=True)


def enqueue_by_id(run_id: int) -> bool:
    """Mark a run for sending and publish it now (outside a request, e.g. after its checks pass)."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        mark(run)
    return not run.publish_failed


def _task_name(run: Run) -> str:
    # Sent by registered name (routes still apply), as Run.enqueue did: the tasks module depends on
    # the models, not the other way round.
    return "evaluation.evaluate_run" if run.preflight_passed else "evaluation.preflight_run"


def publish(run_id: int) -> bool:
    """Send the pending run's next task; True when the broker took it (or nothing was pending)."""
    run = Run.objects.filter(pk=run_id, enqueue_pending_since__isnull=False).first()
    if run is None:
        return True
    if not run.is_active:
        # Cancelled (or otherwise over) while it waited: there is nothing to send any more.
        Run.objects.filter(pk=run_id).update(enqueue_pending_since=None)
        return True
    try:
        current_app.send_task(_task_name(run), args=[run.pk], retry=True, retry_policy=PUBLISH_RETRY_POLICY)
    except Exception as exc:  # kombu raises several types for an unreachable broker; all mean "later".
        logger.warning(
            "Run %s: the broker did not take its task (%s: %s); it stays pending", run_id, type(exc).__name__, exc
        )
        return False
    # Cleared only if nobody marked it again meanwhile (a re-queue would have a newer mark).
    Run.objects.filter(pk=run_id, enqueue_pending_since=run.enqueue_pending_since).update(enqueue_pending_since=None)
    return True


def publish_pending(*, grace: timedelta = SWEEP_GRACE) -> list[int]:
    """Publish every run still marked as waiting (the sweeper calls this); the ids sent."""
    before = timezone.now() - grace
    sent: list[int] = []
    for pk in (
        Run.objects.filter(enqueue_pending_since__lt=before)
        .order_by("enqueue_pending_since", "pk")
        .values_list("pk", flat=True)
    ):
        if publish(pk):
            sent.append(pk)
        else:
            # The broker is still down; the next sweep tries again.
            break
    if sent:
        logger.info("Published pending runs %s", sent)
    return sent
