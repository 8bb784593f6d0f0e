"""A finished run leaves no model behind: none in memory, none on the accelerator.

The backend, its encoder and the pipeline hold each other in reference cycles, which Python frees
only at its next cycle collection; until then a GPU worker kept the model in device memory, and an
out-of-memory retry in the same process loaded a second copy beside it. Every loaded model is
tracked by a weak reference (encoders.LOADED_MODELS) that must be dead when a run returns.
"""

import gc

import pytest

from evaluation.engine.backends import load_backend, release_models
from evaluation.engine.encoders import LOADED_MODELS
from evaluation.engine.errors import RunCancelled
from evaluation.engine.lexical import tokenize
from evaluation.execution import execute_run
from evaluation.models import EmbeddingModel, Run
from evaluation.worker import CANCELLED, run_evaluation
from tests.fakes.models import build_tiny_model
from tests.validation import create_validation_dataset, validation_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def tiny_model(tmp_path):
    texts = [row["persona"] + " " + row["instruction"] for rows in validation_rows().values() for row in rows[:20]]
    folder = build_tiny_model(tmp_path / "tiny-encoder", [" ".join(tokenize(text)) for text in texts])
    return EmbeddingModel.objects.create(name=str(folder), is_local=True)


def test_a_dropped_backend_survives_until_the_models_are_released(tiny_model, tmp_path):
    gc.collect()
    gc.disable()
    try:
        loaded = load_backend(tiny_model.name, cache_root=tmp_path / "cache", device="cpu")
        loaded.backend.encoder.encode(["a persona", "an instruction"])
        assert len(LOADED_MODELS) == 1
        del loaded
        # Reference cycles keep it alive: dropping the last name is not enough.
        assert len(LOADED_MODELS) == 1
        assert release_models() == 0
    finally:
        gc.enable()


def test_no_model_is_alive_after_a_run_finishes_or_is_cancelled(tiny_model, settings, tmp_path):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    dataset = create_validation_dataset(("Hindi", "Tamil"))
    run = Run.objects.create(model=tiny_model, dataset=dataset, status=Run.Status.ENCODING, tasks=["t1"])
    gc.disable()
    try:
        execute_run(run)
        assert len(LOADED_MODELS) == 0

        def cancel(stage, fraction, detail):
            if stage == "SCORING":
                raise RunCancelled("cancelled by the test")

        with pytest.raises(RunCancelled):
            execute_run(run, progress=cancel)
        assert release_models() == 0
    finally:
        gc.enable()


def test_the_worker_frees_the_model_of_a_cancelled_run(tiny_model, settings, tmp_path):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    dataset = create_validation_dataset(("Hindi", "Tamil"))
    run = Run.objects.create(
        model=tiny_model,
        dataset=dataset,
        status=Run.Status.QUEUED,
        tasks=["t1"],
        lifecycle={"preflight": {"passed": True}},
    )

    def cancel_when_scoring(stage, fraction, detail):
        if stage == "SCORING":
            Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)
            raise RunCancelled("cancelled by the test")

    gc.disable()
    try:
        assert run_evaluation(run.pk, echo=cancel_when_scoring) == CANCELLED
        assert len(LOADED_MODELS) == 0
    finally:
        gc.enable()
