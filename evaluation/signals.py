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


def announce_results_changed(sender: type, **identifiers: object) -> None:
    """Send results_changed once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: results_changed.send(sender=sender, **identifiers))
