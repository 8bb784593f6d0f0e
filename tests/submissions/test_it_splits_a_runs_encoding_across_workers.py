"""With EVALUATION_SPLIT_ENCODING, a run is encoded by one task per language, then scored once.

A real worker process takes the chord: one encode task per language writes into the shared embedding
cache, and the run's evaluation that follows finds every text cached and only scores. Its scores are
those of the same model evaluated in one piece.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.conf import settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.engine import DEFAULT_SEED
from evaluation.engine.backends import load_backend
from evaluation.engine.runner import evaluate
from evaluation.execution import load_corpus, run_languages
from evaluation.models import Run
from tests.people import make_admin
from tests.submissions.waiting import is_over, wait_for_run
from tests.workers import running_worker

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_split_run_encodes_per_language_then_scores_as_the_unsplit_run(dataset, tiny_model, tmp_path):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_admin()).key}")
    response = client.post("/api/submissions/", {"model": str(tiny_model)}, format="json")
    assert response.status_code == 201, response.content
    log = tmp_path / "worker.log"
    # `default` serves the chord's bookkeeping task with result backends that poll for the parts.
    with running_worker(queues="default,preflight,gpu", log_path=log, extra_env={"EVALUATION_SPLIT_ENCODING": "1"}):
        run = wait_for_run(response.json()["id"], is_over, timeout=400)
    assert run.status == Run.Status.DONE, f"{run.message}\n{run.log_tail}"

    worker_log = log.read_text()
    languages = run_languages(run)
    assert len(languages) == 6  # five translated languages and English
    encoded = re.findall(r"Run \d+, (\w+): (\d+) texts encoded", worker_log)
    assert sorted(code for code, _ in encoded) == sorted(languages)
    assert all(int(count) > 0 for _, count in encoded)
    # Every text was in the cache when the run was scored: the parts did all the encoding.
    assert run.manifest["texts_encoded"] == 0
    assert run.manifest["texts_from_cache"] == run.manifest["texts_total"] > 0
    # The run's evaluation was received only after the last part had finished.
    assert worker_log.rindex("texts encoded") < worker_log.index("Task evaluation.evaluate_run[")

    # The same model on the same data in one piece, with a cold cache of its own.
    loaded = load_backend(str(tiny_model), cache_root=tmp_path / "unsplit-cache", device="cpu")
    unsplit = evaluate(load_corpus(run), loaded.backend, tasks=list(run.tasks or []), seed=DEFAULT_SEED)
    expected = {(row.task, row.source, row.target, row.metric): row for row in unsplit.scores}
    stored = list(run.scores.all())
    assert len(stored) == len(expected)
    for score in stored:
        row = expected[(score.task, score.source_id, score.target_id or None, score.metric)]
        np.testing.assert_allclose(
            [score.value, score.ci_low, score.ci_high], [row.value, row.ci_low, row.ci_high], atol=1e-6
        )
    assert settings.EVALUATION_SPLIT_ENCODING is False  # only the worker was split
