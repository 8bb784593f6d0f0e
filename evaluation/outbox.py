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

from django.db import transaction
from django.utils import timezone

from evaluation.models import Run

logger = logging.getLogger(__name__)

# How long a fresh mark is left to the publish that follows its own commit before the sweeper may
# publish it too: a message in flight should not normally be sent twice.
SWEEP_GRACE = timedelta(seconds=15)


class BrokerUnavailable(Exception):
    """The run is recorded but its task could not be sent yet; the sweeper will send it later."""


def enqueue_by_id(run_id: int) -> bool:
    """Mark a run for sending and publish it now (outside a request, e.g. after its checks pass)."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        run.enqueue()
    return not run.publish_failed


def publish(run_id: int) -> bool:
    """Send one pending run's task; True when the broker took it (or nothing was pending)."""
    return Run.objects.send_pending(run_id)


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
