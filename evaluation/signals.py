"""The one event that says "what the public pages show has changed".

Sent once when a run finishes, and once per import (a dataset, published results, judgements),
after the transaction that wrote the change commits. Producers only announce; whoever keeps
something derived from the results (the leaderboard's page cache) subscribes in its app's
`ready()`, so that no producer imports a consumer.
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

# Sent with sender = the model class that changed (Run, Dataset, Judgement) and, as keyword
# arguments, whatever identifies the change: `run`, `dataset` or `campaign`.
results_changed = Signal()


# Sent with sender = Run and `run_id` when a run has ended (DONE or FAILED), after the write commits;
# the e-mail to a submitter who asked for one (evaluation.notifications) subscribes in apps.ready().
run_over = Signal()


def announce_run_over(sender: type, run_id: int) -> None:
    """Send run_over once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: run_over.send(sender=sender, run_id=run_id))


def announce_results_changed(sender: type, **identifiers: object) -> None:
    """Send results_changed once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: results_changed.send(sender=sender, **identifiers))
