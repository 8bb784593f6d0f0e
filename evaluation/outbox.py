"""Sending a run's next task through a transactional outbox, so that a broker outage loses nothing.

This module is the one owner of the outbox: marking a run for sending, sending its task after the
transaction commits, the beat-driven sweep, and the signal the views turn into a 503.

A run that needs a task sent is marked in the same transaction that records it (`mark`, which sets
`Run.enqueue_pending_since`); the task is published after that transaction commits, and the mark is
cleared only once the broker has taken the message. When the broker is down, the mark stays: the
person is told the run is recorded and will start, and the sweeper publishes every pending run again
once the broker is back. A message sent twice (published, then the clearing write lost) is harmless:
workers take a run by a conditional update on its row, so only one of them runs it.

The tasks are sent by their functions, so this module imports evaluation.tasks. The worker side (the
tasks and evaluation.worker) therefore never imports it: it announces a run that needs sending, and
the sweep, through evaluation.signals, to which this module is subscribed in apps.ready().
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evaluation import tasks
from evaluation.models import Run

logger = logging.getLogger(__name__)

# How long a fresh mark is left to the publish that follows its own commit before the sweeper may
# publish it too: a message in flight should not normally be sent twice.
SWEEP_GRACE = timedelta(seconds=15)
# One quick attempt to publish: a person may be waiting on the answer, and the sweeper retries later.
PUBLISH_RETRY_POLICY = {"max_retries": 0, "interval_start": 0, "interval_step": 0, "interval_max": 0}


class SendResult(enum.Enum):
    """What became of a run's task when it was sent."""

    # The broker took the task (or there was nothing left to send: the run was over or not marked).
    SENT = "sent"
    # The broker did not take it: the run stays marked and the sweeper sends it later.
    DEFERRED = "deferred"
    # The transaction that marked the run has not committed yet; the task is sent when it does.
    AFTER_COMMIT = "after commit"


@dataclass
class Sending:
    """The handle `mark` returns: its result is filled in by the send that follows the commit."""

    run_id: int
    marked_at: datetime
    result: SendResult = SendResult.AFTER_COMMIT


class BrokerUnavailable(Exception):
    """The run is recorded but its task could not be sent yet; the sweeper will send it later.

    The views answer it with a 503 that names the run, so that nobody submits the same model again.
    """

    def __init__(self, run: Run) -> None:
        super().__init__(run)
        self.run = run


def raise_if_deferred(run: Run, result: SendResult) -> None:
    """Raise BrokerUnavailable when the run's task was left for the sweeper: the 503 the views answer."""
    if result is SendResult.DEFERRED:
        raise BrokerUnavailable(run)


def mark(run: Run) -> Sending:
    """Mark the run for sending in the current transaction; its task is published after commit.

    Outside a transaction the mark commits at once and the task is sent before this returns, so the
    handle's result is already SENT or DEFERRED.
    """
    sending = _mark_id(run.pk)
    run.enqueue_pending_since = sending.marked_at
    return sending


def _mark_id(run_id: int) -> Sending:
    sending = Sending(run_id, timezone.now())
    with transaction.atomic():
        Run.objects.filter(pk=run_id).update(enqueue_pending_since=sending.marked_at)
        # robust: a failing send must never undo or break the commit that recorded the run.
        transaction.on_commit(partial(_send_after_commit, sending), robust=True)
    return sending


def _send_after_commit(sending: Sending) -> None:
    sending.result = send(sending.run_id)


def enqueue(run_id: int) -> SendResult:
    """Mark a run for sending and publish it (outside a request, e.g. after its checks pass)."""
    return _mark_id(run_id).result


def requeue(run: Run) -> SendResult | None:
    """Put a failed or cancelled run back in the queue from its pre-flight checks and send it (staff).

    None when the run was not failed or cancelled. Raises IntegrityError when another live run of the
    same model commit exists; then nothing was written.
    """
    with transaction.atomic():
        if not run.requeue():
            return None
        sending = mark(run)
    return sending.result


def _task_for(run: Run) -> Any:
    """The task a marked run needs next: its pre-flight checks, or its evaluation once they passed."""
    if not run.preflight_passed:
        return tasks.preflight_run
    if settings.EVALUATION_SPLIT_ENCODING:
        # One task that fans the encoding out per language: sent through this outbox like any other,
        # so a split run survives a broker outage and a re-queue too.
        return tasks.split_evaluation
    return tasks.evaluate_run


def send(run_id: int) -> SendResult:
    """Send one marked run's next task now.

    A second message for the same run is harmless: workers take a run by a conditional update of its row.
    """
    run = Run.objects.filter(pk=run_id, enqueue_pending_since__isnull=False).first()
    if run is None:
        return SendResult.SENT
    if not run.is_active:
        # Cancelled (or otherwise over) while it waited: there is nothing to send any more.
        Run.objects.filter(pk=run_id).update(enqueue_pending_since=None)
        return SendResult.SENT
    try:
        _task_for(run).apply_async(args=[run_id], retry=True, retry_policy=PUBLISH_RETRY_POLICY)
    except Exception as exc:  # kombu raises several types for an unreachable broker; all mean "later".
        logger.warning("Run %s: the broker did not take its task (%s); it stays pending", run_id, type(exc).__name__)
        return SendResult.DEFERRED
    # Cleared only if nobody marked it again meanwhile (a re-queue would have a newer mark).
    Run.objects.filter(pk=run_id, enqueue_pending_since=run.enqueue_pending_since).update(enqueue_pending_since=None)
    return SendResult.SENT


def sweep(*, grace: timedelta = SWEEP_GRACE) -> list[int]:
    """Send every run still marked (the beat-driven sweeper calls this); the ids sent."""
    before = timezone.now() - grace
    sent: list[int] = []
    for pk in (
        Run.objects.filter(enqueue_pending_since__lt=before)
        .order_by("enqueue_pending_since", "pk")
        .values_list("pk", flat=True)
    ):
        if send(pk) is SendResult.DEFERRED:
            # The broker is still down; the next sweep tries again.
            break
        sent.append(pk)
    if sent:
        logger.info("Published pending runs %s", sent)
    return sent


# Receivers of evaluation.signals, connected in apps.ready().


def on_run_queued(sender: type, run_id: int, **kwargs: object) -> None:
    """A run is back in the queue (its checks passed, or its worker was lost): mark it and send it."""
    enqueue(run_id)


def on_sweep_due(sender: type, **kwargs: object) -> list[int]:
    """The beat-driven sweep task ran: send the runs recorded while the broker was down."""
    return sweep()
