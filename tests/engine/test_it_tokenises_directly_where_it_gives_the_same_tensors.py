"""The pipeline calls the fast tokenizer directly only where that gives `preprocess`'s very tensors.

Every text of the validation sample, in the calls the producer makes (longest first, truncated at the
model's limit, padded to the longest row), gives the same input ids, type ids and attention masks
both ways, for all-MiniLM-L6-v2 and the tiny model; with a left-padding tokenizer too. A tokenizer
that is not a fast one keeps `preprocess`. The direct call is what made the GPU's producer keep up
with the forward pass (bench/results/h100-2026-11-27).
"""

import pytest
import torch
from sentence_transformers import SentenceTransformer

from evaluation.engine.batches import TOKENIZE_CALL, DirectTokeniser, TokenisedBatches
from tests.fakes.models import build_tiny_model, minilm_path
from tests.validation import validation_triples


@pytest.fixture(scope="module")
def texts():
    rows = validation_triples()
    texts = [text for language in rows.values() for row in language for text in row[1:]]
    return sorted(texts, key=len, reverse=True)


def assert_same_tensors(model, texts, direct):
    for start in range(0, len(texts), TOKENIZE_CALL):
        call = texts[start : start + TOKENIZE_CALL]
        expected, actual = model.preprocess(call), direct(call)
        assert set(expected) == set(actual)
        for key, value in expected.items():
            if isinstance(value, torch.Tensor):
                assert actual[key].dtype == value.dtype and torch.equal(actual[key], value), key
            else:
                assert actual[key] == value, key


@pytest.mark.parametrize("which", ["tiny", "minilm"])
def test_it_gives_preprocess_tensors_for_every_validation_text(which, texts, tmp_path):
    folder = minilm_path() if which == "minilm" else build_tiny_model(tmp_path / "tiny", texts[:200], seed=3)
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    model.max_seq_length = 96  # most validation texts are longer: truncation is exercised
    direct = DirectTokeniser.for_model(model, texts[:64] + texts[-64:])
    assert direct is not None
    assert_same_tensors(model, texts, direct)


def test_it_pads_on_the_tokenizers_side(texts, tmp_path):
    model = SentenceTransformer(str(build_tiny_model(tmp_path / "tiny", texts[:200])), device="cpu")
    model.tokenizer.padding_side = "left"
    direct = DirectTokeniser.for_model(model, texts[:64] + texts[-64:])
    assert direct is not None
    assert_same_tensors(model, texts[:500], direct)
    assert direct([texts[0], texts[-1]])["attention_mask"][1, 0] == 0


def test_a_tokenizer_that_is_not_fast_keeps_preprocess(texts, tmp_path, monkeypatch):
    model = SentenceTransformer(str(build_tiny_model(tmp_path / "tiny", texts[:200])), device="cpu")
    monkeypatch.setattr(type(model.tokenizer), "is_fast", property(lambda self: False))
    assert DirectTokeniser.for_model(model, texts[:10]) is None
    batches = TokenisedBatches(model, texts[:40], token_budget=4096, max_rows=32, pin=False)
    assert sum(len(batch.positions) for batch in batches) == 40
    assert batches.direct is False
