"""Pre-flight checks what the model reads: a tokenizer that maps more than the set share of a language's
sample to unknown tokens, or a model whose embeddings of the sample are empty or constant, is refused as
the submitter's fault, with the figures; the measured rates are on the run page."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from evaluation.engine.sample_check import embedding_problem
from evaluation.models import Run, Score
from evaluation.submissions import Submission, submit
from evaluation.worker import FAILED, PASSED, run_evaluation, run_preflight
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


def test_it_refuses_a_tokenizer_that_reads_a_language_as_unknown_tokens(dataset, fake_hub, tiny_model, settings):
    # The tiny model's vocabulary holds Latin and Devanagari letters only: Tamil and Urdu are all unknown.
    settings.PREFLIGHT_MAX_UNKNOWN_RATE = 0.5
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    researcher = make_researcher()
    run = submit(researcher, Submission(model="tiny-org/tiny-encoder"))
    assert run_preflight(run.pk) == FAILED
    run.refresh_from_db()
    assert run.failure_category == Run.FailureCategory.SUBMITTER
    assert "more than this site's limit of 50% of a language's sample to unknown tokens" in run.message
    assert "Tamil 100.0%" in run.message and "Urdu 100.0%" in run.message and "Hindi" not in run.message
    client = Client()
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()
    assert "<h2>Tokenizer coverage</h2>" in page and "<td>Taml</td>" in page and "100.0%" in page


def test_it_lets_the_same_model_through_under_a_looser_limit(dataset, fake_hub, tiny_model, settings):
    settings.PREFLIGHT_MAX_UNKNOWN_RATE = 1.0
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    run = submit(make_researcher(), Submission(model="tiny-org/tiny-encoder"))
    assert run_preflight(run.pk) == PASSED


def make_constant(folder) -> None:
    """Every token's output becomes the same vector: the last LayerNorm's scale 0 and its shift 0.5."""
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    weights = load_file(path)
    (scale,) = [name for name in weights if name.endswith("output.LayerNorm.weight")][-1:]
    weights[scale] = weights[scale] * 0
    weights[scale.replace("weight", "bias")] = weights[scale.replace("weight", "bias")] * 0 + 0.5
    save_file(weights, path, metadata={"format": "pt"})


def test_it_refuses_a_model_whose_embeddings_are_constant_before_encoding_the_benchmark(dataset, fake_hub, tiny_model):
    make_constant(tiny_model)
    fake_hub.add("tiny-org/constant-encoder", tiny_model)
    run = submit(make_researcher(), Submission(model="tiny-org/constant-encoder"))
    assert run_preflight(run.pk) == PASSED
    assert run_evaluation(run.pk) == FAILED
    run.refresh_from_db()
    assert run.failure_category == Run.FailureCategory.SUBMITTER
    assert "embeddings carry no information" in run.message
    assert "embeddings are the same vector (largest difference" in run.message
    assert not Score.objects.filter(run=run).exists()


def test_it_names_what_is_wrong_with_embeddings():
    rng = np.random.default_rng(0)
    assert embedding_problem(rng.normal(size=(6, 4)).astype(np.float32), min_spread=1e-6) is None
    assert "empty" in embedding_problem(np.zeros((6, 0), dtype=np.float32), min_spread=1e-6)
    assert "zero vectors" in embedding_problem(np.zeros((6, 4), dtype=np.float32), min_spread=1e-6)
    assert "non-finite" in embedding_problem(np.full((6, 4), np.nan, dtype=np.float32), min_spread=1e-6)
    assert "same vector" in embedding_problem(np.ones((6, 4), dtype=np.float32), min_spread=1e-6)
