"""Fault test: the worker is SIGKILLed mid-encoding; the sweeper re-queues the run; a new worker finishes it
from the embedding cache, and no text is encoded twice."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.conf import settings

from evaluation.models import Run
from evaluation.submissions import Submission, submit
from evaluation.worker import sweep_stalled_runs
from tests.people import make_admin
from tests.submissions.data import validation_dataset
from tests.submissions.waiting import is_over, wait_for_run
from tests.workers import running_worker

pytestmark = [
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
# One text per batch keeps even a tiny model encoding the 150-item sample (1,800 texts) for long
# enough to be caught midway.
SLOW = {"EVALUATION_BATCH_SIZE": "1"}


def cached_texts(run: Run) -> int:
    """How many of the run's texts sit in the engine's on-disk embedding cache right now."""
    from evaluation.engine.cache import EmbeddingCache
    from evaluation.engine.encoders import CPU_PRECISION

    cache = EmbeddingCache(settings.EMBEDDING_CACHE_DIR, run.model.name, run.resolved_commit, CPU_PRECISION)
    return cache.stats().unique_keys


def test_it_finishes_a_run_after_its_worker_is_killed(tiny_model):
    dataset = validation_dataset()
    run = submit(make_admin(), Submission(model=str(tiny_model), dataset=dataset))

    with running_worker(queues="preflight,gpu", extra_env=SLOW) as first:
        # Wait for real progress: a quarter of the texts encoded (10 % + 75 % x 1/4 of the bar).
        wait_for_run(run.pk, lambda r: r.status == Run.Status.ENCODING and r.progress >= 29, timeout=300)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    killed = Run.objects.get(pk=run.pk)
    assert killed.status == Run.Status.ENCODING and killed.attempts == 1, killed.log_tail
    encoded_before_kill = cached_texts(killed)
    assert encoded_before_kill > 0

    # Nothing writes heartbeats any more; once they are stale, the sweeper puts the run back.
    time.sleep(2)
    assert sweep_stalled_runs(older_than=1.5) == [run.pk]
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED

    with running_worker(queues="gpu", extra_env=SLOW):
        done = wait_for_run(run.pk, is_over, timeout=600)
    assert done.status == Run.Status.DONE, f"{done.message}\n{done.log_tail}"
    assert done.attempts == 2
    lost, finished = done.lifecycle["attempts"]
    assert lost["outcome"] == "lost" and finished["outcome"] == "done"
    assert lost["last_progress"] >= 29 and lost["last_detail"].startswith("language")
    assert lost["worker"] != finished["worker"]
    total = done.manifest["texts_total"]
    # The second attempt took from the cache exactly what the first one had encoded, and encoded
    # only the rest: together they encoded every text once.
    assert finished["texts_total"] == total
    assert finished["texts_from_cache"] == encoded_before_kill
    assert 0 < finished["texts_encoded"] < total
    assert encoded_before_kill + finished["texts_encoded"] == total
    assert cached_texts(done) == total
    # Nothing lost: every language was scored.
    translated = set(dataset.item_counts_by_language()) - {"eng"}
    assert set(done.scores.filter(task="t1").values_list("source", flat=True)) == translated
