"""execute_run resumes from the embedding cache: nothing encoded twice, interrupted runs finish the rest."""

import pytest

from evaluation.engine.cache import EmbeddingCache
from evaluation.engine.encoders import CPU_PRECISION
from evaluation.engine.errors import RunCancelled
from evaluation.engine.lexical import tokenize
from evaluation.engine.results import Details
from evaluation.execution import ENGINE_VERSION, execute_run
from evaluation.models import EmbeddingModel, Run, Score
from tests.fakes.models import build_tiny_model
from tests.validation import create_validation_dataset, validation_rows

pytestmark = pytest.mark.django_db

# Three languages and English, persona and instruction, no prompts: enough pairs for every task,
# few enough that three evaluations of them stay quick.
LANGUAGES = ("Hindi", "Tamil", "Urdu")
TOTAL_TEXTS = 4 * 2 * 150


@pytest.fixture
def tiny_model(tmp_path):
    texts = [row["persona"] + " " + row["instruction"] for rows in validation_rows().values() for row in rows[:40]]
    folder = build_tiny_model(tmp_path / "tiny-encoder", [" ".join(tokenize(text)) for text in texts])
    return EmbeddingModel.objects.create(name=str(folder), is_local=True)


def new_run(model, dataset) -> Run:
    return Run.objects.create(model=model, dataset=dataset, status=Run.Status.ENCODING)


def score_values(run: Run) -> dict:
    return {
        (s.task, s.source_id, s.target_id, s.metric): (s.value, s.ci_low, s.ci_high)
        for s in Score.objects.filter(run=run)
    }


@pytest.mark.slow
def test_it_resumes_an_interrupted_run_and_encodes_nothing_twice(tiny_model, settings, tmp_path):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    dataset = create_validation_dataset(LANGUAGES)
    run = new_run(tiny_model, dataset)
    encoding_calls = []

    def cancel_after_two_chunks(stage, fraction, detail):
        if stage == "ENCODING" and fraction > 0:
            encoding_calls.append(detail)
            if len(encoding_calls) == 2:
                raise RunCancelled("cancelled by the test")

    with pytest.raises(RunCancelled):
        execute_run(run, progress=cancel_after_two_chunks)
    assert not Score.objects.filter(run=run).exists()
    run.refresh_from_db()
    assert run.manifest == {}
    cache = EmbeddingCache(settings.EMBEDDING_CACHE_DIR, tiny_model.name, run.resolved_commit, CPU_PRECISION)
    stored_before = cache.stats().rows
    assert 0 < stored_before < TOTAL_TEXTS

    execute_run(run)
    run.refresh_from_db()
    assert run.manifest["texts_total"] == TOTAL_TEXTS
    assert run.manifest["texts_from_cache"] == stored_before
    assert run.manifest["texts_encoded"] == TOTAL_TEXTS - stored_before
    stats = cache.stats()
    assert stats.rows == stats.unique_keys == TOTAL_TEXTS, "a text was encoded and stored twice"
    assert run.engine_version == ENGINE_VERSION and run.resolved_commit.startswith("local-")
    resumed_scores = score_values(run)

    # Run again (e.g. a retry after the scores were written): everything comes from the cache, the
    # scores are replaced rather than duplicated, and they are the same numbers.
    execute_run(run)
    run.refresh_from_db()
    assert run.manifest["texts_encoded"] == 0
    assert run.manifest["texts_from_cache"] == TOTAL_TEXTS
    assert score_values(run) == resumed_scores

    # The same evaluation from an empty cache gives the same scores as the interrupted-and-resumed one.
    settings.EMBEDDING_CACHE_DIR = tmp_path / "fresh-cache"
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    fresh = new_run(tiny_model, dataset)
    execute_run(fresh)
    fresh.refresh_from_db()
    assert fresh.manifest["texts_encoded"] == TOTAL_TEXTS
    fresh_scores = score_values(fresh)
    assert fresh_scores.keys() == resumed_scores.keys()
    for key, values in resumed_scores.items():
        assert fresh_scores[key] == pytest.approx(values, abs=1e-6), key


def test_it_writes_the_engines_details_alone_keeps_the_lifecycle_and_reports_progress_by_stage(
    tiny_model, settings, tmp_path
):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=40)
    run = new_run(tiny_model, dataset)
    run.tasks = ["t1", "t2", "t4"]
    # The worker's record of the attempt lives in the lifecycle; a key an older writer left in the
    # details is not the engine's and does not survive the engine's write.
    run.lifecycle = {"attempts": [{"number": 1, "worker": "w1"}]}
    run.details = {"attempts": [{"attempt": 1, "worker": "w1"}]}
    run.save()
    seen = []

    execute_run(run, progress=lambda stage, fraction, detail: seen.append((stage, fraction, detail)))

    run.refresh_from_db()
    assert [attempt.worker for attempt in run.life.attempts] == ["w1"]
    assert "attempts" not in run.details
    assert run.details == Details.from_dict(run.details).to_dict()
    assert set(run.details["t4"]["reliability"]) == {"hin", "tam"}
    not_requested = ("t3", "t3x", "t5", "multi")
    assert run.details["skipped_tasks"] == dict.fromkeys(not_requested, "not requested")
    assert {stage for stage, _, _ in seen} == {"DOWNLOADING", "ENCODING", "SCORING"}
    assert all(0.0 <= fraction <= 1.0 for _, fraction, _ in seen)
    assert any("language 1 of 2" in detail for stage, _, detail in seen if stage == "ENCODING")
    assert any(detail.startswith("task t2: hin→tam") for stage, _, detail in seen if stage == "SCORING")
    assert Score.objects.filter(run=run, task="t2").values("source", "target").distinct().count() == 2
    assert not Score.objects.filter(run=run, task="t3").exists()
