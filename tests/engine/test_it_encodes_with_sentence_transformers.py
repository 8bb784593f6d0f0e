"""Encoders on tiny real models built in a temp folder, revision pinning, and readable load errors."""

import json

import numpy as np
import pytest

from evaluation.engine.encoders import (
    E5_INSTRUCT_PROMPTS,
    SentenceTransformerEncoder,
    prompts_for,
    resolve_model,
)
from evaluation.engine.errors import HubUnreachableError, ModelLoadError, ModelNotFoundError
from tests.fakes.hub import running_fake_hub
from tests.fakes.models import build_tiny_model

TEXTS = ["a persona asks for an instruction", "an instruction", "persona", "a"]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-multilingual-e5-small", TEXTS)


def load(folder, **options) -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder.load(resolve_model(str(folder)), device="cpu", **options)


def test_it_returns_float32_unit_vectors_with_the_family_prompt_per_role(tiny_folder):
    encoder = load(tiny_folder)
    assert encoder.prompts == {"query": "query: ", "reverse_query": "query: ", "document": "passage: "}
    queries = encoder.encode(TEXTS, role="query")
    documents = encoder.encode(TEXTS, role="document")
    assert queries.dtype == np.float32 and queries.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, rtol=1e-5)
    assert not np.allclose(queries, documents), "the E5 prefixes must reach the model"
    np.testing.assert_allclose(queries, encoder.encode_prefixed([f"query: {t}" for t in TEXTS]), rtol=1e-5)
    assert prompts_for("intfloat/multilingual-e5-large-instruct") == E5_INSTRUCT_PROMPTS
    assert prompts_for("sentence-transformers/LaBSE")["query"] == ""


def test_it_pins_a_local_folder_to_a_hash_of_its_files(tiny_folder, tmp_path):
    first = resolve_model(str(tiny_folder))
    assert first.is_local and first.commit == resolve_model(str(tiny_folder)).commit
    assert first.commit.startswith("local-") and len(first.commit) <= 64
    copy = build_tiny_model(tmp_path / "copy", TEXTS, seed=1)
    assert resolve_model(str(copy)).commit != first.commit


def test_it_halves_the_batch_size_when_the_device_runs_out_of_memory(tiny_folder):
    encoder = load(tiny_folder, batch_size=16)
    expected = encoder.encode(TEXTS * 3)
    model_class = type(encoder.model)

    class SmallDevice(model_class):
        """The real model, on a device that fits at most 4 texts per batch."""

        def forward(self, features, **kwargs):
            if features["input_ids"].shape[0] > 4:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return super().forward(features, **kwargs)

    encoder.model.__class__ = SmallDevice
    vectors = encoder.encode(TEXTS * 3)
    assert encoder.batch_size == 4 and encoder.halvings == 2
    np.testing.assert_allclose(vectors, expected, rtol=1e-4, atol=1e-6)


def test_it_says_when_a_path_is_not_a_model(tmp_path):
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve_model(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFoundError, match="not a model folder"):
        resolve_model(str(tmp_path / "empty"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="could not be loaded"):
        SentenceTransformerEncoder.load(resolve_model(str(broken)), device="cpu")


def test_it_refuses_to_run_remote_code(tmp_path):
    custom = tmp_path / "custom"
    custom.mkdir()
    config = {"model_type": "nirdesha-custom", "auto_map": {"AutoModel": "modeling_custom.CustomModel"}}
    (custom / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (custom / "modeling_custom.py").write_text("raise SystemExit('remote code ran')\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="could not be loaded"):
        SentenceTransformerEncoder.load(resolve_model(str(custom)), device="cpu")


def test_it_explains_that_an_uncached_model_cannot_be_fetched_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError, match="HF_HUB_OFFLINE is set and nirdesha-tests/absent"):
        resolve_model("nirdesha-tests/absent")


def test_it_reports_an_unreachable_hub_as_our_problem(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(HubUnreachableError, match="Cannot reach the Hugging Face Hub"):
        resolve_model("sentence-transformers/all-MiniLM-L6-v2")


def test_it_resolves_hub_ids_to_commits_and_names_unknown_models_and_revisions(monkeypatch, tiny_folder):
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    with running_fake_hub() as hub:
        hub.add("known/model", tiny_folder, commit=commit)
        endpoint = hub.url
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        resolved = resolve_model("known/model", "main")
        assert resolved.commit == commit and resolved.path is None
        with pytest.raises(ModelNotFoundError, match="There is no public model 'nobody/nothing'"):
            resolve_model("nobody/nothing")
        with pytest.raises(ModelNotFoundError, match="The revision 'no-such-branch' does not exist in known/model"):
            resolve_model("known/model", "no-such-branch")
        with pytest.raises(ModelNotFoundError, match="neither a Hugging Face model id"):
            resolve_model("not a valid id!")
