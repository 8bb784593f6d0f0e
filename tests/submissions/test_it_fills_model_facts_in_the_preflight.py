"""The pre-flight fills the model-facts columns from the files it checks, and keeps the submitter's declaration."""

from __future__ import annotations

import pytest
from safetensors import safe_open

from evaluation.model_facts import facts_from_files, max_tokens
from evaluation.models import EmbeddingModel
from evaluation.submissions import Submission, submit
from evaluation.worker import PASSED, run_preflight
from tests.people import make_admin, make_researcher

pytestmark = pytest.mark.django_db


def parameters(folder) -> int:
    with safe_open(str(folder / "model.safetensors"), "np") as weights:
        return sum(weights.get_tensor(name).size for name in weights.keys())  # noqa: SIM118


def test_it_reads_dimension_max_tokens_and_memory_of_a_local_model(dataset, tiny_model):
    run = submit(make_admin(), Submission(model=str(tiny_model), trained_on_nirdesha=True))
    assert run_preflight(run.pk) == PASSED
    model = EmbeddingModel.objects.get(pk=run.model_id)
    # The tiny model is a 32-wide BERT saved by sentence-transformers with max_seq_length 128.
    assert model.embedding_dimension == 32 and model.max_tokens == 128
    assert model.parameter_count == parameters(tiny_model)
    assert model.memory_bytes_fp16 == 2 * model.parameter_count
    assert model.trained_on_nirdesha is True
    # A folder on our disk has no Hub page, and whether its weights are public is unknown.
    assert model.hub_url == "" and model.open_weights is None


def test_it_links_a_hub_model_and_marks_its_weights_open(dataset, tiny_model, fake_hub):
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    run = submit(make_researcher(), Submission(model="tiny-org/tiny-encoder"))
    assert run_preflight(run.pk) == PASSED
    model = EmbeddingModel.objects.get(pk=run.model_id)
    assert model.hub_url == "https://huggingface.co/tiny-org/tiny-encoder" and model.open_weights is True
    assert model.embedding_dimension == 32 and model.max_tokens == 128
    assert model.trained_on_nirdesha is None


def test_it_prefers_a_final_dense_layer_and_ignores_a_tokenizer_without_a_limit():
    facts = facts_from_files(
        "org/m",
        is_local=False,
        config={"hidden_size": 768, "max_position_embeddings": 514, "model_type": "xlm-roberta"},
        tokenizer_config={"model_max_length": 1000000000000000019884624838656},
        pooling={"word_embedding_dimension": 768},
        dense_layers=[{"in_features": 768, "out_features": 512}],
        parameter_count=135_000_000,
    )
    assert facts["embedding_dimension"] == 512
    # XLM-R reserves two of its 514 positions.
    assert facts["max_tokens"] == 512 and facts["memory_bytes_fp16"] == 270_000_000
    assert max_tokens({"max_position_embeddings": 512}, {"model_max_length": 256}, None) == 256
