"""Sending a run's next task through a transactional outbox, so that a broker outage loses nothing.

This module is the one owner of the outbox: marking a run for sending, sending its task after the
transaction commits, the beat-driven sweep, and the signal the views turn into a 503.

A run that needs a task sent is marked in the same transaction that records it (`mark`, which sets
`Run.enqueue_pending_since`); the task is published after that transaction commits, and the mark is
cleared only once the broker has taken the message. When the broker is down, the mark stays: the
person is told the run is recorded and will start, and the sweeper publishes every pending run again
once the broker is back. A message sent twice (published, then the clearing write lost) is harmless:
workers take a run by a conditional update on its row, so only one of them runs it.

The tasks are sent by their registered names (`app.send_task`, routed by CELERY_TASK_ROUTES like any
task), so this module imports neither evaluation.tasks nor evaluation.worker, and both call it
directly: no cycle, and no signal standing in for an import.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.celery_app import app
from evaluation.models import Run, RunQuerySet

logger = logging.getLogger(__name__)

# How long a fresh mark is left to the publish that follows its own commit before the sweeper may
# publish it too: a message in flight should not normally be sent twice.
SWEEP_GRACE = timedelta(seconds=15)
# One quick attempt to publish: a person may be waiting on the answer, and the sweeper retries later.
PUBLISH_RETRY_POLICY = {"max_retries": 0, "interval_start": 0, "interval_step": 0, "interval_max": 0}
# The names the tasks are registered under in evaluation/tasks.py; a foundation test checks each one.
PREFLIGHT_TASK = "evaluation.preflight_run"
SPLIT_EVALUATION_TASK = "evaluation.split_evaluation"
EVALUATION_TASK = "evaluation.evaluate_run"
TASK_NAMES = (PREFLIGHT_TASK, SPLIT_EVALUATION_TASK, EVALUATION_TASK)


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


def _task_for(run: Run) -> str:
    """The name of the task a marked run needs next: its pre-flight checks, or its evaluation once they passed."""
    if not run.preflight_passed:
        return PREFLIGHT_TASK
    if settings.EVALUATION_SPLIT_ENCODING:
        # One task that fans the encoding out per language: sent through this outbox like any other,
        # so a split run survives a broker outage and a re-queue too.
        return SPLIT_EVALUATION_TASK
    return EVALUATION_TASK


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
        app.send_task(_task_for(run), args=[run_id], retry=True, retry_policy=PUBLISH_RETRY_POLICY)
    except Exception as exc:  # kombu raises several types for an unreachable broker; all mean "later".
        logger.warning("Run %s: the broker did not take its task (%s); it stays pending", run_id, type(exc).__name__)
        return SendResult.DEFERRED
    # Cleared only if nobody marked it again meanwhile (a re-queue would have a newer mark).
    Run.objects.filter(pk=run_id, enqueue_pending_since=run.enqueue_pending_since).update(
        enqueue_pending_since=None, sent_at=timezone.now()
    )
    return SendResult.SENT


def _runs() -> RunQuerySet:
    # The manager's own QuerySet methods, typed (mypy does not see through as_manager()).
    return cast(RunQuerySet, Run.objects.all())


def resend_forgotten() -> list[int]:
    """Mark again the runs that waited unclaimed for RUN_UNCLAIMED_RESEND_SECONDS after their task was
    sent; the ids. The broker took the message but may have lost it since (a Redis that restarted
    without its data forgets every queued message, and nothing else would ever start those runs). A
    message that was only slow is then sent twice, which is harmless: the claim keeps the run single.
    """
    before = timezone.now() - timedelta(seconds=settings.RUN_UNCLAIMED_RESEND_SECONDS)
    forgotten = list(_runs().forgotten_by_the_broker(before).order_by("pk").values_list("pk", flat=True))
    resent: list[int] = []
    for pk in forgotten:
        # Marked only if still waiting unclaimed (a worker may have taken it since the query); the mark
        # stays, for the sweep to send, if the broker does not take the message now.
        if _runs().forgotten_by_the_broker(before).filter(pk=pk).update(enqueue_pending_since=timezone.now()):
            resent.append(pk)
            if send(pk) is SendResult.DEFERRED:
                break
    if resent:
        logger.warning("Runs %s waited unclaimed after their task was sent; sent again", resent)
    return resent


def sweep(*, grace: timedelta = SWEEP_GRACE) -> list[int]:
    """Send every run still marked, and again every run the broker seems to have forgotten (the
    beat-driven sweeper calls this); the ids sent."""
    sent = resend_forgotten()
    before = timezone.now() - grace
    for pk in (
        Run.objects.filter(enqueue_pending_since__lt=before)
        .order_by("enqueue_pending_since", "pk")
        .values_list("pk", flat=True)
    ):
        if pk in sent:
            continue
        if send(pk) is SendResult.DEFERRED:
            # The broker is still down; the next sweep tries again.
            break
        sent.append(pk)
    if sent:
        logger.info("Published pending runs %s", sent)
    return sent
