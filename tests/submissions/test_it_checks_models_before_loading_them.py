"""The pure model checks of evaluation/preflight.py, on real tiny model folders (no database)."""

from __future__ import annotations

import json

import pytest
from safetensors import safe_open

from evaluation.engine.errors import ModelLoadError, ModelNotFoundError
from evaluation.preflight import (
    InvalidModelReference,
    ModelRejected,
    enforce_size,
    inspect_local_folder,
    load_tokenizer,
    read_safetensors_header,
    tokenizer_coverage,
    validate_reference,
)
from tests.fakes.models import add_remote_code


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        ("", "Give a Hugging Face model id"),
        ("https://huggingface.co/intfloat/e5", "not a URL"),
        ("owner/na me", "not a valid Hugging Face model id"),
        ("owner//name", "not a valid Hugging Face model id"),
        ("a/b/c", "not a valid Hugging Face model id"),
        ("bert-base-uncased", "use the form owner/name"),
        ("/models/../etc", "without '..'"),
    ],
)
def test_it_refuses_malformed_model_references(reference, reason):
    with pytest.raises(InvalidModelReference, match=reason):
        validate_reference(reference)


def test_it_accepts_hub_ids_and_absolute_folders():
    assert validate_reference("  intfloat/multilingual-e5-small ") == "intfloat/multilingual-e5-small"
    assert validate_reference("/srv/models/tiny/") == "/srv/models/tiny"


def test_it_pins_a_local_folder_to_a_hash_of_its_files(tiny_model):
    first = inspect_local_folder(str(tiny_model))
    again = inspect_local_folder(str(tiny_model))
    assert first.commit == again.commit and first.commit.startswith("local-")
    (tiny_model / "README.md").write_text("changed")
    assert inspect_local_folder(str(tiny_model)).commit != first.commit


def test_it_counts_parameters_from_the_safetensors_headers(tiny_model):
    check = inspect_local_folder(str(tiny_model))
    with safe_open(str(tiny_model / "model.safetensors"), "np") as weights:
        counted = sum(weights.get_tensor(name).size for name in weights.keys())  # noqa: SIM118
    assert check.parameter_count == counted > 0
    assert check.weight_files == ["model.safetensors"]
    assert check.weight_bytes == (tiny_model / "model.safetensors").stat().st_size


def test_it_refuses_a_model_that_needs_remote_code(tiny_model):
    add_remote_code(tiny_model)
    with pytest.raises(ModelRejected, match="remote code"):
        inspect_local_folder(str(tiny_model))


def test_it_refuses_custom_sentence_transformers_modules(tiny_model):
    modules = json.loads((tiny_model / "modules.json").read_text())
    modules[1]["type"] = "my_package.MyPooling"
    (tiny_model / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ModelRejected, match=r"my_package\.MyPooling"):
        inspect_local_folder(str(tiny_model))


def test_it_refuses_a_model_without_safetensors_weights(tiny_model):
    (tiny_model / "model.safetensors").rename(tiny_model / "pytorch_model.bin")
    with pytest.raises(ModelRejected, match=r"no safetensors weights \(found only pytorch_model.bin"):
        inspect_local_folder(str(tiny_model))


def test_it_reports_damaged_weights_without_loading_them(tiny_model):
    weights = tiny_model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])
    with pytest.raises(ModelLoadError, match="damaged"):
        read_safetensors_header(weights)
    weights.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ModelLoadError, match="not a valid safetensors file"):
        inspect_local_folder(str(tiny_model))


def test_it_reports_a_missing_folder(tmp_path):
    with pytest.raises(ModelNotFoundError, match="no model folder"):
        inspect_local_folder(str(tmp_path / "nowhere"))
    with pytest.raises(ModelLoadError, match=r"no config\.json"):
        inspect_local_folder(str(tmp_path))


def test_it_refuses_weights_over_the_size_limit(tiny_model):
    check = inspect_local_folder(str(tiny_model))
    enforce_size(check, max_bytes=check.weight_bytes)
    with pytest.raises(ModelRejected, match="over this site's limit"):
        enforce_size(check, max_bytes=check.weight_bytes - 1)


def test_it_measures_tokenizer_coverage_per_script(tiny_model):
    tokenizer = load_tokenizer(tiny_model)
    samples = {
        "Latn": ["I want help", "please write"],
        # The tiny vocabulary has the Devanagari block but not the Tamil one.
        "Deva": ["मैं शिक्षक हूँ"],
        "Taml": ["நான் ஆசிரியர்"],
    }
    coverage = tokenizer_coverage(
        lambda text: tokenizer(text, add_special_tokens=False)["input_ids"], tokenizer.unk_token_id, samples
    )
    # "want" is not in the vocabulary, so it is spelled out: i w ##a ##n ##t help please write.
    assert coverage["Latn"] == {"texts": 2, "words": 5, "tokens": 8, "tokens_per_word": 1.6, "unk_rate": 0.0}
    assert coverage["Deva"]["unk_rate"] == 0.0
    assert coverage["Deva"]["tokens_per_word"] > 1.0  # Split into letters: many tokens per word.
    assert coverage["Taml"]["unk_rate"] == 1.0
    assert coverage["Taml"]["tokens"] == 2  # One [UNK] per word.
