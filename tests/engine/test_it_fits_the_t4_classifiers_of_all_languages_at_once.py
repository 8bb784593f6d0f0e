"""T4's classifiers of all languages are fitted in a few threads at once, with the figures of one at a time.

On a many-core machine the runner submits each language's fit at the task's first unit (the fits are
independent and deterministic); the figures, intervals and details must be exactly those of fitting
one language at a time, which is what a two-core machine does.
"""

import threading
import time
from dataclasses import asdict

import numpy as np
import pytest

from evaluation.engine import units
from evaluation.engine.backends import load_backend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.errors import RunCancelled
from evaluation.engine.runner import evaluate
from tests.fakes.models import build_tiny_model
from tests.validation import validation_triples


@pytest.fixture
def corpus():
    rows = validation_triples(languages=("Hindi", "Tamil", "Bengali"), limit=60)
    return build_corpus(rows, requested_languages=None, name="validation", version="v1", content_hash="v1hash")


def t4_run(corpus, folder, tmp_path):
    loaded = load_backend(str(folder), cache_root=tmp_path / "cache", device="cpu")
    return evaluate(corpus, loaded.backend, tasks=["t4"], seed=1, n_resamples=50)


def test_threads_give_the_figures_of_one_language_after_another(corpus, tmp_path, monkeypatch):
    tiny = build_tiny_model(tmp_path / "tiny", list(corpus.languages["hin"].personas[:20]))
    monkeypatch.setattr(units.os, "cpu_count", lambda: 1)
    one_at_a_time = t4_run(corpus, tiny, tmp_path)
    threads: list[str] = []
    fit = units.PairClassification._fit_language

    def recording_fit(spec, context, source):
        threads.append(threading.current_thread().name)
        return fit(spec, context, source)

    monkeypatch.setattr(units.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(units.PairClassification, "_fit_language", staticmethod(recording_fit))
    at_once = t4_run(corpus, tiny, tmp_path)

    # Three languages, submitted at once to three threads of the task's own pool.
    assert len(threads) == 3 and len(set(threads)) > 1, threads
    assert all(name.startswith("t4-classifiers") for name in threads), threads
    assert [asdict(row) for row in at_once.scores] == [asdict(row) for row in one_at_a_time.scores]
    assert at_once.details.to_dict()["t4"] == one_at_a_time.details.to_dict()["t4"]
    for row in at_once.scores:
        assert np.isfinite(row.value)


def test_a_run_stopped_during_t4_leaves_no_fit_to_run_after_it(corpus, tmp_path, monkeypatch):
    tiny = build_tiny_model(tmp_path / "tiny", list(corpus.languages["hin"].personas[:20]))
    monkeypatch.setattr(units.os, "cpu_count", lambda: 1)  # one thread: the fits run one after another
    fitted: list[str] = []
    fit = units.PairClassification._fit_language

    def recording_fit(spec, context, source):
        fitted.append(source)
        return fit(spec, context, source)

    monkeypatch.setattr(units.PairClassification, "_fit_language", staticmethod(recording_fit))

    def stop_at_the_second_language(stage, fraction, detail):
        if detail.startswith("task t4:") and "(2 of" in detail:
            raise RunCancelled("stopped by its submitter")

    loaded = load_backend(str(tiny), cache_root=tmp_path / "cache", device="cpu")
    with pytest.raises(RunCancelled):
        evaluate(corpus, loaded.backend, tasks=["t4"], seed=1, n_resamples=50, progress=stop_at_the_second_language)
    # Once the task's threads have ended: the first language was scored and the second may have
    # started before the stop, but the third was never fitted.
    deadline = time.monotonic() + 120
    while any(thread.name.startswith("t4-classifiers") for thread in threading.enumerate()):
        assert time.monotonic() < deadline, "the classifier threads did not end"
        time.sleep(0.05)
    assert 1 <= len(fitted) <= 2, fitted


def test_fits_started_with_the_first_task_give_the_figures_of_fits_started_at_t4(corpus, tmp_path, monkeypatch):
    tiny = build_tiny_model(tmp_path / "tiny", list(corpus.languages["hin"].personas[:20]))
    monkeypatch.setattr(units.os, "cpu_count", lambda: 16)
    submitted_at_step: list[int] = []
    fitted_ahead = units.PairClassification._fitted_ahead

    def recording_submission(self, spec, context):
        if spec.id not in context.fitted_ahead:
            submitted_at_step.append(context.step)
        return fitted_ahead(self, spec, context)

    monkeypatch.setattr(units.PairClassification, "_fitted_ahead", recording_submission)
    loaded = load_backend(str(tiny), cache_root=tmp_path / "cache", device="cpu")
    at_t4 = evaluate(corpus, loaded.backend, tasks=["t1", "t4"], seed=1, n_resamples=50)
    from_the_start = evaluate(
        corpus, loaded.backend, tasks=["t1", "t4"], seed=1, n_resamples=50, classifiers_from_the_start=True
    )
    # Three T1 units come first: submitted at T4's first unit, then before any unit.
    assert submitted_at_step == [3, 0]
    assert [asdict(row) for row in from_the_start.scores] == [asdict(row) for row in at_t4.scores]
    assert from_the_start.details.to_dict()["t4"] == at_t4.details.to_dict()["t4"]
